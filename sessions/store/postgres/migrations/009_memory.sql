-- Memory stores and the versions of their files (core.MemoryStores).
--
-- Ids, names, partitions and paths are COLLATE "C": lists come in byte
-- order, as in the bbolt store. Bodies are the JSON the API shows, kept
-- byte for byte (bytea); the other columns are copies of what the store
-- looks rows up, orders or sums by, written with the body in one
-- statement. A store's partitions and versions go with it (ON DELETE
-- CASCADE): DeleteMemoryStore deletes its row, after checking that no
-- agent's latest version names it.

-- memory_stores: one row per memory store.
--   id    the store's id (mem_…).
--   name  its name, unique: agents name memory stores by id or by name (a
--         name may not look like an id); the constraint refuses a taken
--         name at create and rename.
--   body  the core.MemoryStore as JSON.
CREATE TABLE memory_stores (
    id   text COLLATE "C" PRIMARY KEY,
    name text COLLATE "C" NOT NULL CONSTRAINT memory_stores_name_key UNIQUE,
    body bytea NOT NULL
);

-- memory_partitions: one row per partition holding versions of a store's
-- files. ChangeMemory locks the row (SELECT … FOR UPDATE) for its whole
-- transaction, so the changes of one partition, from any replica, take
-- turns: each sees the versions the one before wrote, and the limits and
-- IfVersion hold.
--   store_id   the memory store.
--   partition  a tenant (core.Session.Tenant), or "*" for a shared store.
--   last_seq   the seq of the partition's last written version; the next
--              gets last_seq + 1.
-- The primary key serves MemoryPartitions (a store's, in byte order).
CREATE TABLE memory_partitions (
    store_id  text COLLATE "C" NOT NULL REFERENCES memory_stores (id) ON DELETE CASCADE,
    partition text COLLATE "C" NOT NULL,
    last_seq  bigint NOT NULL,
    PRIMARY KEY (store_id, partition)
);

-- memory_versions: every retained version of every file; pruned ones are
-- deleted.
--   store_id, partition  the file's partition.
--   path                 the file's path, relative to the partition's root.
--   version              its number: 1, 2, … per path; never reused, since
--                        a file's latest version is never pruned.
--   seq                  the partition's order of writes, which pruning
--                        follows, oldest first.
--   deleted, size        as in body: a deletion, and the content's bytes
--                        (0 for a deletion), which the partition's limit
--                        sums.
--   body                 the core.MemoryVersion as JSON, without content.
--   content              the file's text (UTF-8); NULL for a deletion.
--                        bytea: text cannot hold a NUL character.
-- The primary key serves a file's versions, and a partition's files by
-- path.
CREATE TABLE memory_versions (
    store_id  text COLLATE "C" NOT NULL,
    partition text COLLATE "C" NOT NULL,
    path      text COLLATE "C" NOT NULL,
    version   integer NOT NULL,
    seq       bigint NOT NULL,
    deleted   boolean NOT NULL,
    size      integer NOT NULL,
    body      bytea NOT NULL,
    content   bytea,
    PRIMARY KEY (store_id, partition, path, version),
    FOREIGN KEY (store_id, partition) REFERENCES memory_partitions (store_id, partition) ON DELETE CASCADE
);
