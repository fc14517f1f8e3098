"""Each tenant's share of the content store's cap, so one tenant cannot flood another out.

SOURCE_STORE_MAX_MB is the store's total; a tenant (a name of AUTH_TOKENS) may hold at most
its share of it: SOURCE_STORE_TENANT_MAX_MB when set, else the total divided among the
configured tenants.  A put past its share drops the tenant's own least recently used
records; a put larger than the share is not stored.  When the shares add up to more than the
total (SOURCE_STORE_TENANT_MAX_MB set high), the total is kept by dropping the least recently
used records of the tenant holding the most: never of one within the total's fair part.
The result cache shares itself out by the same rule (CACHE_MAX_MB, CACHE_TENANT_MAX_MB), with
`tenant_max_bytes`.  Pure: the stores and the caches apply it.
"""

from __future__ import annotations

from mcp_summarizer.errors import OverStoreCap

__all__ = ["EVICT_OVER_SHARES", "check_put", "tenant_max_bytes"]


def tenant_max_bytes(max_bytes: int, tenant_max_mb: float, tenants: int) -> int:
    """A tenant's share: ``tenant_max_mb`` (SOURCE_STORE_TENANT_MAX_MB, CACHE_TENANT_MAX_MB)
    when set, at most the total; else the total divided among ``tenants`` (one without
    AUTH_TOKENS: the whole)."""
    if tenant_max_mb > 0:
        return min(max_bytes, int(tenant_max_mb * 1_000_000))
    return max_bytes // max(1, tenants)


def check_put(size: int, *, max_bytes: int, tenant_max_bytes: int) -> None:
    """OverStoreCap if a put of ``size`` bytes cannot be stored at all."""
    if size > max_bytes:
        raise OverStoreCap(
            f"the text is {size / 1e6:.3g} MB, over the content store's cap "
            f"SOURCE_STORE_MAX_MB={max_bytes / 1e6:g}, so it was not stored"
        )
    if size > tenant_max_bytes:
        raise OverStoreCap(
            f"the text is {size / 1e6:.3g} MB, over one tenant's share of the content store "
            f"({tenant_max_bytes / 1e6:g} MB: SOURCE_STORE_TENANT_MAX_MB, else SOURCE_STORE_MAX_MB "
            "divided among the AUTH_TOKENS tenants), so it was not stored"
        )


# The end of a Redis put script (store and result cache alike): the tenant's own oldest entries
# evicted down to its ``share``, then, while the ``total`` is over ``cap``, the oldest entries of
# the tenant holding the most.  The script defines ``evict_from(name, over)`` (drops ``name``'s
# least recently used entries while ``over()`` is positive, returning how many) and the keys
# ``total`` and ``held`` and the values ``cap``, ``share`` and ``tenant``.
EVICT_OVER_SHARES = """local function over_total()
  return tonumber(redis.call('GET', total) or '0') - cap
end
local evicted = evict_from(tenant, function()
  return tonumber(redis.call('HGET', held, tenant) or '0') - share
end)
while over_total() > 0 do
  local most, most_bytes = nil, 0
  local all = redis.call('HGETALL', held)
  for i = 1, #all, 2 do
    local bytes = tonumber(all[i + 1])
    if bytes > most_bytes then most, most_bytes = all[i], bytes end
  end
  if most == nil then break end
  local dropped = evict_from(most, over_total)
  if dropped == 0 then break end
  evicted = evicted + dropped
end
return evicted
"""
