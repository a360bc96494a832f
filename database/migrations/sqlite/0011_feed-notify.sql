-- Live subscriptions (contract §16). PostgreSQL's 0011 adds triggers that notify listening
-- processes of appended events and key changes. SQLite has no notifications: each process
-- watches the file's PRAGMA data_version instead (database.WatchFeed), so nothing changes here;
-- the migration exists so both dialects have the same versions.
SELECT 1;
