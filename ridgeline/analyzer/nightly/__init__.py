"""The nightly job: two runs compared (diff, identity: kernel groups matched across runs; docshape:
the JSON document checked before it is read) and tonight against the last weeks (trend)."""
