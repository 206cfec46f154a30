-- wrk script: one random 1 MiB Range request per request, within a file of SIZE bytes.
--   wrk -s range.lua URL -- SIZE [mixed|aligned|arbitrary]
-- aligned: first byte a multiple of 1 MiB; arbitrary: any first byte; mixed (default): a coin toss per request.
-- Headers given with -H (e.g. Authorization) are kept.
local MiB = 1048576
local threads = 0
local size, mode

function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

function init(args)
  size = tonumber(args[1]) or error("range.lua: give the file size after --")
  mode = args[2] or "mixed"
  math.randomseed(os.time() * 1000 + (thread_id or 0))
end

function request()
  local aligned = mode == "aligned" or (mode == "mixed" and math.random() < 0.5)
  local first
  if aligned then
    first = math.random(0, math.floor(size / MiB) - 1) * MiB
  else
    first = math.random(0, size - MiB)
  end
  local headers = {}
  for name, value in pairs(wrk.headers) do headers[name] = value end
  headers["Range"] = "bytes=" .. first .. "-" .. (first + MiB - 1)
  return wrk.format(nil, nil, headers)
end
