"""The domains API under /v1: a key acts as its user, on that user's projects only.

Views (views.py) are thin, like the dashboard's: find the owner's object (another
owner's is a 404, never a 403), validate input with an input serializer, call one
service of domains/services/ (or read through domains/selectors.py), shape the answer
with an output serializer. A service's refusal becomes the Error body with the
service's own sentence and code (errors.py).
"""
