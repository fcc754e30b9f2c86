package accounttest

// UndoToSchema3 turns a current accounts.db into the file the release before account removal
// left (schema 3): each later schema step undone (removedSchema, stampSchema,
// approvalTokenSchema in account/sqlite.go), so a test can open it as an upgrading trap-sandbox does. A new schema
// step adds its undoing here.
const UndoToSchema3 = `
DROP TABLE removed_credentials;
ALTER TABLE tokens DROP COLUMN account_created;
ALTER TABLE credentials DROP COLUMN account_created;
ALTER TABLE enrollment_keys DROP COLUMN account_created;
ALTER TABLE link_codes DROP COLUMN account_created;
ALTER TABLE link_codes DROP COLUMN approved_token;
PRAGMA user_version = 3;
`
