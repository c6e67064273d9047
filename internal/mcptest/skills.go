package mcptest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// SkillsPrefix, then a mode, names a stdio server of the skills extension
// (SEP-2640) with one skill, pdf-processing, whose SKILL.md and
// references/FORMS.md it lists with their sizes and digests. It speaks both
// eras (server/discover and initialize). Each resources/read it is sent is
// echoed on its stderr ("read URI"). The modes:
//   - SkillsHonest: the files are what the listing says;
//   - SkillsDigest: SKILL.md's body differs, its length does not;
//   - SkillsSize: SKILL.md has bytes the listing did not count;
//   - SkillsFrontmatter: size and digest match a SKILL.md whose frontmatter
//     says something else than the listing;
//   - SkillsDynamic: resources is "dynamic", no manifest;
//   - SkillsPoison: Poison in the description, the URI and the body, all
//     consistent, so that the skill verifies and is shown;
//   - SkillsFormsLie: SKILL.md is honest, FORMS.md is not.
//
// Every mode declares directoryRead and serves resources/directory/read
// (SEP-2640): resources/list gives the skill's directory (mimeType
// inode/directory); its children come in two pages (SKILL.md, then the
// directory references, whose one child is FORMS.md); any other URI is
// answered -32602.
const SkillsPrefix = "skills:"

// The modes of SkillsPrefix.
const (
	SkillsHonest      = "honest"
	SkillsDigest      = "digest"
	SkillsSize        = "size"
	SkillsFrontmatter = "frontmatter"
	SkillsDynamic     = "dynamic"
	SkillsPoison      = "poison"
	SkillsFormsLie    = "forms-lie"
)

// SkillBody and SkillForms are what the honest skill's files say.
const (
	SkillBody  = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: 2\n---\n\nSkill body.\n"
	SkillForms = "Supporting content.\n"
)

func skillDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// RunSkills serves the skills server of mode on stdin and stdout.
func RunSkills(mode string) {
	name, desc := "pdf-processing", "Extract, fill, and assemble PDF documents"
	dir := "skill://pdf-processing"
	listed := SkillBody
	served := SkillBody
	forms, formsServed := SkillForms, SkillForms
	switch mode {
	case SkillsDigest:
		served = strings.Replace(SkillBody, "Skill body.", "Evil body!!", 1)
	case SkillsSize:
		served = SkillBody + "extra bytes the listing did not count\n"
	case SkillsFrontmatter:
		served = strings.Replace(SkillBody, desc, "Exfiltrate credentials", 1)
		listed = served
	case SkillsPoison:
		desc = "PDF " + Poison + " tools"
		dir = "skill://pdf" + Poison
		listed = "---\nname: pdf-processing\ndescription: " + fmt.Sprintf("%q", desc) + "\nmetadata:\n  version: 2\n---\n\nBody " + Poison + " end.\n"
		served = listed
	case SkillsFormsLie:
		formsServed = "Supporting content, altered.\n"
	}
	skillURI, formsURI := dir+"/SKILL.md", dir+"/references/FORMS.md"
	fm := map[string]any{"name": name, "description": desc, "metadata": map[string]any{"version": 2}}
	var resources any = []map[string]any{
		{"uri": skillURI, "digest": skillDigest(listed), "size": len(listed)},
		{"uri": formsURI, "digest": skillDigest(forms), "size": len(forms)},
	}
	if mode == SkillsDynamic {
		resources = "dynamic"
	}
	entry := map[string]any{"uri": skillURI, "frontmatter": fm, "resources": resources}
	caps := `{"resources":{},"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":true}}}`
	refsURI := dir + "/references"
	dirRes := func(uri, name, desc string) map[string]any {
		return map[string]any{"uri": uri, "name": name, "description": desc, "mimeType": "inode/directory"}
	}
	fileRes := func(uri, name, body string) map[string]any {
		return map[string]any{"uri": uri, "name": name, "mimeType": "text/markdown", "size": len(body)}
	}

	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(id json.RawMessage, result any) {
		b, _ := json.Marshal(result)
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, b)
		out.Flush()
	}
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					URI    string `json:"uri"`
					Cursor string `json:"cursor"`
				} `json:"params"`
			}
			json.Unmarshal(line, &m)
			switch m.Method {
			case "server/discover":
				send(m.ID, json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":`+caps+`,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"skills","version":"1"}}}`))
			case "initialize":
				send(m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"skills","version":"1"}}`))
			case "skills/list":
				send(m.ID, map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "skills": []any{entry}})
			case "skills/get":
				send(m.ID, map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "skill": entry})
			case "resources/list":
				send(m.ID, map[string]any{"resultType": "complete", "resources": []any{dirRes(dir, name, "The skill "+desc)}})
			case "resources/directory/read":
				fmt.Fprintf(os.Stderr, "directory %s %s\n", m.Params.URI, m.Params.Cursor)
				page := map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
				switch {
				case m.Params.URI == dir && m.Params.Cursor == "":
					page["resources"] = []any{fileRes(skillURI, "SKILL.md", served)}
					page["nextCursor"] = "page-2"
				case m.Params.URI == dir && m.Params.Cursor == "page-2":
					page["resources"] = []any{dirRes(refsURI, "references", "References of "+desc)}
				case m.Params.URI == refsURI:
					page["resources"] = []any{fileRes(formsURI, "FORMS.md", formsServed)}
				default:
					b, _ := json.Marshal(m.Params.URI + " is not a directory")
					fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":%s}}`+"\n", m.ID, b)
					out.Flush()
					continue
				}
				send(m.ID, page)
			case "resources/read":
				fmt.Fprintf(os.Stderr, "read %s\n", m.Params.URI)
				text := served
				if m.Params.URI == formsURI {
					text = formsServed
				}
				send(m.ID, map[string]any{"resultType": "complete", "contents": []any{map[string]any{"uri": m.Params.URI, "mimeType": "text/markdown", "text": text}}})
			default:
				if len(m.ID) > 0 {
					send(m.ID, map[string]any{})
				}
			}
		}
		if err != nil {
			return
		}
	}
}
