-- PostgreSQL's 0020 sets the stores table's fillfactor, so that the many versions of a store's
-- row that concurrent writers leave are pruned early. SQLite writes rows in place and has one
-- writer at a time, so nothing changes here; the migration exists so both dialects have the
-- same versions.
SELECT 1;
