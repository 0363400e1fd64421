"""API keys, in one app of the ground floor: the model, its issue and revoke services,
the admin, `createapikey` / `revokeapikey`, the key format (`keyformat.py`) and the lookup
cache with its invalidation (`keycache.py`, receivers connected in `apps.py`).

petstore/api's authentication and rate limits read the model; nothing here imports
petstore/api, pets or domains.
"""
