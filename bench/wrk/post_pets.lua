-- POST /v1/pets with a fresh body each request; with IDEMPOTENCY=1 a fresh
-- Idempotency-Key too. Counts 201s per thread so the runner can compare them
-- with the rows that appeared in the table.
-- `counter` and `created` are globals of each thread's Lua state so that
-- done() can read them back with thread:get().
counter = 0
created = 0
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
  end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("created")
  end
  io.write(string.format("CREATED %d\n", total))
end
