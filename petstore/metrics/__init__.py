"""What an operator watches, as `GET /metrics` in the Prometheus text format.

The ground floor of it: the store that adds up every process's counters and histograms
(`store.py`), the HTTP request counter and the one function every way of answering a
request calls (`http.py`), the task counters (`tasks.py`), the queue depths read from the
broker (`queues.py`), the release the process runs (`build.py`) and the token-guarded
endpoint that writes it all out (`endpoint.py`).
The apps define their own families and collectors (`domains/metrics.py`) with `store`'s
constructors and `endpoint.register`. docs/decisions/metrics.md says why it is built so.
"""
