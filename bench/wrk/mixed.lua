-- The mixed benchmark (bench/mixed.py): one POST /v1/pets for every BENCH_READS_PER_CREATE
-- GETs, the GETs going round the paths of BENCH_READS (separated by spaces), every
-- request with the bench's bearer key (the FastAPI peer ignores it). The requests are
-- made once; the POSTs' names only need to be valid, not unique.
local token = os.getenv("BENCH_TOKEN")
local every = tonumber(os.getenv("BENCH_READS_PER_CREATE")) + 1
local tag = (os.getenv("BENCH_TAG") or "mixed") .. "-" .. (os.getenv("BENCH_RUN") or "")
local reads = {}
local create = nil
local counter = 0

function init(args)
  local auth = {["Authorization"] = "Bearer " .. token}
  for path in string.gmatch(os.getenv("BENCH_READS"), "%S+") do
    table.insert(reads, wrk.format("GET", path, auth))
  end
  local body = string.format('{"name": "%s", "categoryId": 1, "status": "available"}', tag)
  create = wrk.format("POST", "/v1/pets", {
    ["Authorization"] = "Bearer " .. token,
    ["Content-Type"] = "application/json",
  }, body)
end

function request()
  counter = counter + 1
  if counter % every == 0 then
    return create
  end
  return reads[(counter % #reads) + 1]
end
