-- The platform side of the store: vaults and their sealed credentials,
-- sandbox environments, installations into Slack, GitHub and Linear with
-- their sealed tokens, and once keys.
--
-- Every id and name column is COLLATE "C": lists page in id order, which
-- must be byte order (as in the bbolt store) whatever the database's
-- default collation. Each body is the JSON the API shows, kept byte for
-- byte (bytea, never jsonb, which reorders keys). Sealed values are
-- opaque to the store and live in tables of their own, so no list or
-- lookup of the records ever reads them.

-- vaults: one row per vault.
--   id    the vault's id (vlt_…).
--   body  the core.Vault as JSON.
CREATE TABLE vaults (
    id   text COLLATE "C" PRIMARY KEY,
    body bytea NOT NULL
);

-- credentials: a vault's credentials, their metadata only.
--   id        the credential's id (vcr_…), unique across vaults: the
--             caller assigns it, because it seals the secret to it.
--   vault_id  the vault it belongs to, for ever; deleting the vault
--             deletes it (and, through credential_secrets, its secret).
--   body      the core.Credential as JSON.
CREATE TABLE credentials (
    id       text COLLATE "C" PRIMARY KEY,
    vault_id text COLLATE "C" NOT NULL REFERENCES vaults (id) ON DELETE CASCADE,
    body     bytea NOT NULL
);
-- ListCredentials reads a vault's credentials in id order; the foreign
-- key's cascade finds them through it too.
CREATE INDEX credentials_vault_id ON credentials (vault_id, id);

-- credential_secrets: the sealed secret of each credential.
--   credential_id  the credential; its secret goes with it.
--   sealed         the sealed core.CredentialSecret, as the Sealer made it.
CREATE TABLE credential_secrets (
    credential_id text COLLATE "C" PRIMARY KEY REFERENCES credentials (id) ON DELETE CASCADE,
    sealed        bytea NOT NULL
);

-- environments: one row per sandbox environment.
--   id    the environment's id (env_…).
--   name  its name, unique: agents and sessions name environments by id
--         or by name (a name may not look like an id, so the two never
--         collide); the constraint refuses a taken name at create and
--         rename.
--   body  the core.Environment as JSON.
CREATE TABLE environments (
    id   text COLLATE "C" PRIMARY KEY,
    name text COLLATE "C" NOT NULL CONSTRAINT environments_name_key UNIQUE,
    body bytea NOT NULL
);

-- installations: the gateway installed into one tenant of a platform.
--   id           the installation's id (ins_…).
--   provider     "slack", "github", "linear".
--   external_id  the tenant on the platform (a Slack team or enterprise
--                id, a GitHub App installation id, a Linear organization
--                id). One installation per provider and tenant: the
--                constraint makes two replicas finishing the same install
--                flow save one record, and FindInstallation looks it up.
--   body         the core.Installation as JSON (its has_token and
--                token_expires_at follow installation_tokens, in the same
--                transaction).
CREATE TABLE installations (
    id          text COLLATE "C" PRIMARY KEY,
    provider    text COLLATE "C" NOT NULL,
    external_id text COLLATE "C" NOT NULL,
    body        bytea NOT NULL,
    CONSTRAINT installations_provider_external_id_key UNIQUE (provider, external_id)
);
-- ListInstallations filtered by provider pages in id order.
CREATE INDEX installations_provider_id ON installations (provider, id);

-- installation_tokens: the sealed tokens of an installation, while it has
-- any (ForgetInstallationTokens deletes the row and keeps the record).
--   installation_id  the installation; its tokens go with it.
--   sealed           the tokens, sealed with core.InstallationAAD.
CREATE TABLE installation_tokens (
    installation_id text COLLATE "C" PRIMARY KEY REFERENCES installations (id) ON DELETE CASCADE,
    sealed          bytea NOT NULL
);

-- once_keys: keys remembered for a while (an OAuth state redeemed once, a
-- notice a person gets once).
--   key    the key, e.g. "oauth:state:<nonce>".
--   until  when it is forgotten; the store's clock decides, so tests can
--          move it. Once deletes the expired keys before it records one.
CREATE TABLE once_keys (
    key   text COLLATE "C" PRIMARY KEY,
    until timestamptz NOT NULL
);
-- Once finds the expired keys without reading the live ones.
CREATE INDEX once_keys_until ON once_keys (until);
