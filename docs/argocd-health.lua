-- Argo CD health of a DBInstance, DBSubnetGroup or DBParameterGroup (rds.operator.rs), from the
-- kstatus conditions the operator writes:
--   Degraded    when Stalled is True (only a spec change can help);
--   Suspended   while the rds.operator.rs/paused annotation holds it (Synced reason ReconcilePaused);
--   Progressing until the operator has seen this generation, or while Reconciling is True;
--   Healthy     when Ready is True;
--   Degraded    otherwise (Ready False with nothing in progress: RDS reports a failed state).
local hs = { status = "Progressing", message = "waiting for rds-operator to report" }
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
local c = {}
for _, condition in ipairs(obj.status.conditions) do
  c[condition.type] = condition
end
local function is_true(name)
  return c[name] ~= nil and c[name].status == "True"
end
local function say(status, name)
  hs.status = status
  if c[name] ~= nil then
    hs.message = c[name].message
  end
  return hs
end
if is_true("Stalled") then
  return say("Degraded", "Stalled")
end
if c.Synced ~= nil and c.Synced.reason == "ReconcilePaused" then
  return say("Suspended", "Synced")
end
if obj.status.observedGeneration ~= obj.metadata.generation then
  hs.message = "rds-operator has not yet acted on this generation"
  return hs
end
if is_true("Reconciling") then
  return say("Progressing", "Reconciling")
end
if is_true("Ready") then
  return say("Healthy", "Ready")
end
return say("Degraded", "Ready")
