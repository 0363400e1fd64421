"""API keys, in one app of the ground floor: the model, its issue and revoke services,
the admin, `revokeapikey`, the key format (`keyformat.py`), the scopes (`scopes.py`), the
issuing forms' one-time tokens (`issuetokens.py`) and the lookup cache with its
invalidation (`keycache.py`, receivers connected in `apps.py`). What a member may give a
key (a project, scopes within their role) is domains' (domains/services/keys.py, with
`createapikey` and the admin's project column).

petstore/api's authentication and rate limits read the model; nothing here imports
petstore/api, pets or domains.
"""
