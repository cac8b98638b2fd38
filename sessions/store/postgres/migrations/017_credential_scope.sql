-- Credential scopes: a credential belongs to the admin (global), a tenant
-- or a tenant group, in its body's "scope" (core.CredentialScope). Every
-- credential stored before scopes existed was the admin's: its body gains
-- a global scope. The field is the last of core.Credential, so appending
-- it to the compact JSON gives the bytes the encoder writes.
UPDATE credentials
   SET body = convert_to(
           left(rtrim(convert_from(body, 'UTF8'), E' \n'), -1) || ',"scope":{"type":"global"}}',
           'UTF8')
 WHERE position('"scope":' in convert_from(body, 'UTF8')) = 0;
