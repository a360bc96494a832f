-- Instant revocation (contract §2): one row counts the changes that can end an authentication.
-- Every process caches authentications under the count it read and reads the count again on
-- each request, so a revocation, a rotation or anything else that changes a key or a secret,
-- made by any process, invalidates every cache before the changing transaction's caller sees
-- it return. The triggers bump it in the changing transaction itself: no code path can forget.
-- Inserting a key or a secret ends no authentication and is not counted; nor is last_used_at.
CREATE TABLE `key_changes` (`id` integer NOT NULL PRIMARY KEY CHECK (`id` = 1), `n` integer NOT NULL);
INSERT INTO `key_changes` (`id`, `n`) VALUES (1, 0);
CREATE TRIGGER api_keys_changed AFTER UPDATE OF revoked_at, scopes, label, store_id, id ON api_keys
BEGIN UPDATE key_changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
BEGIN UPDATE key_changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER api_key_secrets_changed AFTER UPDATE OF expires_at, hash, key_id, store_id ON api_key_secrets
BEGIN UPDATE key_changes SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER api_key_secrets_deleted AFTER DELETE ON api_key_secrets
BEGIN UPDATE key_changes SET n = n + 1 WHERE id = 1; END;
