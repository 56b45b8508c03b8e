// The build's last step: writes the OpenAPI document of the merchant API to docs/openapi.json.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { openApiDocument } from '../src/http/api-registry';

const target = path.join(__dirname, '..', '..', 'docs', 'openapi.json');
writeFileSync(target, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
