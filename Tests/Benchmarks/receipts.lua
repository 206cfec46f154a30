-- wrk script: POST /v1/receipts with a different purchase each request, cycling through a file of them, or
-- POST /v1/notifications/appstore with a different V2 notification each request (URL names the endpoint).
--   wrk -s receipts.lua URL -- FILE [receipt|transactions|notifications] [threads] [offset]
-- FILE has one base64 receipt (or one StoreKit 2 JWS, or one notification's signedPayload) per line. Each wrk thread starts at its own share of
-- the file (after OFFSET lines: what earlier runs used), so no two requests repeat a purchase until the file
-- has been used up.
local threads = 0
local lines = {}
local field, next_line

function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then lines[#lines + 1] = line end
  end
  field = args[2] or "receipt"
  local count = tonumber(args[3]) or 2
  local offset = tonumber(args[4]) or 0
  next_line = (offset + math.floor(#lines / count) * ((thread_id or 1) - 1)) % #lines
end

function request()
  next_line = next_line % #lines + 1
  local body
  if field == "notifications" then
    body = '{"signedPayload": "' .. lines[next_line] .. '"}'
  elseif field == "transactions" then
    body = '{"transactions": ["' .. lines[next_line] .. '"]}'
  else
    body = '{"receipt": "' .. lines[next_line] .. '"}'
  end
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
