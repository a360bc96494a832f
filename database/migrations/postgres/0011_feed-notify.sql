-- Live subscriptions (contract §16): every process that serves subscriptions listens on the
-- channel creditd_feed and reads the feed when woken. The notifications are sent by triggers in
-- the writing transaction itself, so every writer (any instance, the command line, the sweep,
-- the platform door) wakes them, and PostgreSQL delivers them only when that transaction
-- commits. The payload names the store whose feed moved (stores.event_seq, bumped by every
-- appended event), or is empty when a key or secret changed (key_changes): subscribers then
-- check their key again. A notification carries no event: the feed is what subscribers read.
CREATE FUNCTION feed_notify_store() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('creditd_feed', NEW.id);
  RETURN NULL;
END
$$;
CREATE TRIGGER stores_feed_notify AFTER UPDATE OF event_seq ON stores
  FOR EACH ROW EXECUTE FUNCTION feed_notify_store();
CREATE FUNCTION feed_notify_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('creditd_feed', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER key_changes_feed_notify AFTER UPDATE ON key_changes
  FOR EACH STATEMENT EXECUTE FUNCTION feed_notify_keys();
