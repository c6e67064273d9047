// Validates an XML file against an XML Schema with xmllint-wasm (libxml2
// for Node), for TestJUnitValidates: node validate-xsd.js MODULES XSD XML.
// Exits 0 when the document is valid, 1 with the errors on stderr when not.
const fs = require('fs');
const path = require('path');
const [modules, xsd, xml] = process.argv.slice(2);
const { validateXML } = require(path.join(modules, 'xmllint-wasm'));
validateXML({
  xml: [{ fileName: path.basename(xml), contents: fs.readFileSync(xml, 'utf8') }],
  schema: [fs.readFileSync(xsd, 'utf8')],
}).then((r) => {
  if (!r.valid) {
    console.error(JSON.stringify(r.errors, null, 2));
    process.exit(1);
  }
}, (e) => { console.error(String(e)); process.exit(2); });
