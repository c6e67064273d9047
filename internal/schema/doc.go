// Package schema validates JSON values against the JSON Schemas that MCP
// servers publish (tool input and output schemas, elicitation forms), and
// turns the text a person types into the JSON a schema asks for (a
// KEY=VALUE or KEY:=JSON pair, as mcpi call's arguments and --elicit-field
// are given: SplitPair, PairValue).
//
// Schemas come from servers, so nothing here follows a network or file
// $ref: only references inside the schema itself resolve.
//
// It imports nothing else from mcpi.
package schema
