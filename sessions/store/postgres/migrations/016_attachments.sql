-- Attachments (core.AttachmentStore): the bytes of files and images on
-- messages, downloaded by the gateway and referenced from the messages'
-- user.message.attachments by id.
CREATE TABLE attachments (
    id         text PRIMARY KEY,
    data       bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
