"""fxcache's own state: the SQLite files it keeps outside the cache dir, per cache dir.

Lowest first: ``own_db`` (opens a database only when it is fxcache's: never
through a link, never another application's file); ``trust`` (what proves that a
file still holds the bytes a row was made from: racily clean readings, local file
systems); ``index`` (the persistent
index of decoded entries and each key's function, so a second run need not
decode again); ``usage`` (the facts traces gave about entries: real use and
compile cost, which ``explain`` records and ``gc`` ranks by); ``remote_reads``
(fxcache's own reads of a Redis remote cache, so they never count as use).

Everything here is read back as untrusted input: rows are JSON, never pickle,
type-checked on the way out, and trusted only while the file they describe is
unchanged. Never writes the cache dir; never imports torch.
"""
