"""Webhooks: signed JSON POSTs per commit, merge and tag, delivered at least once by a
background thread per webhook (engine.py), never on the write path. Configured by
`[[webhooks]]` entries (server/config.py `Webhook`); the delivery log is served at
`GET /webhooks/deliveries` (admin).

Modules: `signing` (pure HMAC), `events` (payloads), `cursor` and `log` (persisted
state), `sender` (POST with retries), `engine` (the threads). Importing this package
imports none of them (the app starts without httpx until a webhook is configured).
"""
