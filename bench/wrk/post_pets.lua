-- POST /v1/pets with a fresh body each request; with IDEMPOTENCY=1 a fresh
-- Idempotency-Key too. Collects the id of every 201 so the runner can check
-- each one against the table (every 201 is a row, no row made twice).
-- `counter`, `created` and `ids` are globals of each thread's Lua state so that
-- done() can read them back with thread:get().
counter = 0
created = 0
ids = ""
local threads = {}
local use_key = os.getenv("IDEMPOTENCY") == "1"
local token = os.getenv("BENCH_TOKEN")
local tag = (os.getenv("BENCH_TAG") or "run") .. "-" .. (os.getenv("BENCH_RUN") or "")

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  created = 0
  ids = ""
end

function request()
  counter = counter + 1
  local name = string.format("%s-%d-%d", tag, id, counter)
  local headers = {
    ["Authorization"] = "Bearer " .. token,
    ["Content-Type"] = "application/json",
  }
  if use_key then
    headers["Idempotency-Key"] = name
  end
  local body = string.format('{"name": "%s", "categoryId": 1, "status": "available"}', name)
  return wrk.format("POST", "/v1/pets", headers, body)
end

function response(status, headers, body)
  if status == 201 then
    created = created + 1
    ids = ids .. (string.match(body, '"id":(%d+)') or "?") .. ","
  end
end

function done(summary, latency, requests)
  local total = 0
  local all = ""
  for _, thread in ipairs(threads) do
    total = total + thread:get("created")
    all = all .. thread:get("ids")
  end
  io.write(string.format("CREATED %d\n", total))
  io.write("CREATED_IDS " .. all .. "\n")
end
