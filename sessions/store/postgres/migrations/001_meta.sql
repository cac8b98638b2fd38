-- switchboard_meta holds facts about the database itself, one row each:
--   min_schema        the lowest schema version a binary must know to run
--                     against this database. Migrations are additive, so a
--                     binary one version behind keeps running during a
--                     rolling deploy; a migration that breaks older binaries
--                     raises this value, and they refuse to start.
--   master_key_check  a value derived from the master key (never the key),
--                     so a replica started with another key refuses to start.
CREATE TABLE switchboard_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
INSERT INTO switchboard_meta (key, value) VALUES ('min_schema', '1');
