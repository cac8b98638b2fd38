-- Skills: folders of instructions and files that agents pin by version
-- and sandboxes mount. Additive: an older binary ignores the new tables.
--
-- As in the other tables, ids and names are COLLATE "C" (lists page in
-- byte order, as in the bbolt store) and each body is the JSON the API
-- shows, kept byte for byte as bytea. There are no foreign keys:
-- DeleteSkill deletes a skill's rows of all three tables in one
-- transaction, under the lock of the skill's row.

-- skills holds the latest version of each skill.
--   id       the skill's id (skl_…); ListSkills pages in its order.
--   name     the skill's name (its latest version's); unique, so a create
--            or rename to a taken name fails on skills_name_key. Skills
--            are looked up by id or by name (a name never looks like an
--            id).
--   version  the latest version's number.
--   body     JSON of core.Skill, the latest version.
-- An agent version saved with the skill reads this row FOR SHARE, and
-- DeleteSkill locks it FOR UPDATE before it looks for the agents and
-- sessions that pin the skill: of the two, the one that comes second
-- sees what the first did.
CREATE TABLE skills (
    id      text COLLATE "C" PRIMARY KEY,
    name    text COLLATE "C" NOT NULL CONSTRAINT skills_name_key UNIQUE,
    version integer NOT NULL,
    body    bytea NOT NULL
);

-- skill_versions holds every version of every skill, immutable.
--   skill_id, version  the version's skill and number (1, 2, …).
--   body               JSON of core.Skill as that version was saved: its
--                      file list gives each file's path, size, mode and
--                      sha256.
CREATE TABLE skill_versions (
    skill_id text COLLATE "C" NOT NULL,
    version  integer NOT NULL,
    body     bytea NOT NULL,
    PRIMARY KEY (skill_id, version)
);

-- skill_contents holds the files' contents of a skill's versions, each
-- distinct content once per skill (versions share the files they have in
-- common).
--   skill_id  the skill.
--   sha256    the content's sha256, lowercase hex, as a version's file
--             list gives it.
--   content   the file's bytes.
CREATE TABLE skill_contents (
    skill_id text COLLATE "C" NOT NULL,
    sha256   text COLLATE "C" NOT NULL,
    content  bytea NOT NULL,
    PRIMARY KEY (skill_id, sha256)
);
