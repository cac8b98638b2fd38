-- The embeddings of memory files (core.MemoryEmbeddings): derived data,
-- re-made by the memory tool from a file's content when missing, of an
-- older version, or of another model or dimension.
--
-- memory_embeddings: one row per file that has an embedding.
--   store_id, partition  the file's partition: an embedding is read only
--                        with its partition, as the file is.
--   path                 the file's path, relative to the partition's root.
--   version              the file version that was embedded: a put of an
--                        older version than the row's changes nothing.
--   model                the embedding model that made the vectors.
--   body                 record.MemoryEmbeddingBody: a 4-byte big-endian
--                        length n, n bytes of JSON (path, version, model,
--                        dims, the chunks' byte spans), then each chunk's
--                        vector as little-endian float32s.
-- A file's deletion deletes its row (ChangeMemory, in its transaction);
-- a store's or partition's goes with it (ON DELETE CASCADE).
CREATE TABLE memory_embeddings (
    store_id  text COLLATE "C" NOT NULL,
    partition text COLLATE "C" NOT NULL,
    path      text COLLATE "C" NOT NULL,
    version   integer NOT NULL,
    model     text NOT NULL,
    body      bytea NOT NULL,
    PRIMARY KEY (store_id, partition, path),
    FOREIGN KEY (store_id, partition) REFERENCES memory_partitions (store_id, partition) ON DELETE CASCADE
);
