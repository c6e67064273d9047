package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

func skillsPeer(mode string, era string) []string {
	return append([]string{"--era", era}, peerArgs(mcptest.SkillsPrefix+mode)...)
}

// mcpi skills lists and reads nothing; mcpi skill reads SKILL.md, and only
// the FILEs named, each verified before it is shown; a file that is not
// what was listed ends in exit 7 with nothing of it shown and no further
// read. The server's stderr (-v) says which reads it was sent.
func TestSkillsCommands(t *testing.T) {
	t.Parallel()
	const skillRead = "read skill://pdf-processing/SKILL.md"
	const formsRead = "read skill://pdf-processing/references/FORMS.md"
	for _, era := range []string{"modern", "legacy"} {
		for _, tc := range []cliCase{
			{name: "list", args: with(skillsPeer(mcptest.SkillsHonest, era), "skills", "-v"), code: command.ExitOK,
				stdout: []string{"NAME", "FILES", "pdf-processing  2      skill://pdf-processing/SKILL.md  Extract, fill, and assemble PDF documents"}},
			{name: "list json", args: with(skillsPeer(mcptest.SkillsDynamic, era), "skills", "--json"), code: command.ExitOK,
				stdout: []string{`"resources":"dynamic"`, `"uri":"skill://pdf-processing/SKILL.md"`}, jsonStdout: true},
			{name: "load", args: with(skillsPeer(mcptest.SkillsHonest, era), "skill", "pdf-processing", "-v"), code: command.ExitOK,
				stdout:    []string{mcptest.SkillBody},
				stderr:    []string{skillRead, "verified skill://pdf-processing/SKILL.md: size, digest, frontmatter"},
				notStdout: []string{"Supporting"}},
			{name: "load by uri with a file", args: with(skillsPeer(mcptest.SkillsHonest, era), "skill", "skill://pdf-processing/SKILL.md", "references/FORMS.md"), code: command.ExitOK,
				stdout: []string{mcptest.SkillForms}, notStdout: []string{"Skill body"},
				stderr: []string{"verified skill://pdf-processing/references/FORMS.md: size, digest"}},
			{name: "dynamic", args: with(skillsPeer(mcptest.SkillsDynamic, era), "skill", "pdf-processing"), code: command.ExitOK,
				stdout: []string{"Skill body."}, stderr: []string{`frontmatter; size, digest unchecked (resources is "dynamic"`}},
			{name: "digest", args: with(skillsPeer(mcptest.SkillsDigest, era), "skill", "pdf-processing", "references/FORMS.md"), code: command.ExitVerify,
				stderr: []string{"mcpi: skill://pdf-processing/SKILL.md failed verification, not used: digest: served sha256:"}},
			{name: "size", args: with(skillsPeer(mcptest.SkillsSize, era), "skill", "pdf-processing"), code: command.ExitVerify,
				stderr: []string{"size: 158 bytes served, 120 listed"}},
			{name: "frontmatter", args: with(skillsPeer(mcptest.SkillsFrontmatter, era), "skill", "pdf-processing"), code: command.ExitVerify,
				stderr: []string{`frontmatter: description: file "Exfiltrate credentials", listing "Extract, fill, and assemble PDF documents"`}},
			{name: "supporting file lies", args: with(skillsPeer(mcptest.SkillsFormsLie, era), "skill", "pdf-processing", "references/FORMS.md"), code: command.ExitVerify,
				stderr: []string{"verified skill://pdf-processing/SKILL.md", "references/FORMS.md failed verification"}},
			{name: "unknown", args: with(skillsPeer(mcptest.SkillsHonest, era), "skill", "nope"), code: command.ExitProtocol,
				stderr: []string{"no skill named nope (mcpi skills lists them)"}},
		} {
			t.Run(era+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				checkCase(t, tc)
				_, out, errOut := runCLI(t, "", append([]string{tc.args[0], "-v"}, tc.args[1:]...)...)
				if !strings.Contains(errOut, skillRead) != (tc.name == "list" || tc.name == "list json" || tc.name == "unknown") {
					t.Errorf("SKILL.md read or not as it should be: %s", errOut)
				}
				if tc.code == command.ExitVerify {
					if strings.Contains(out, "Evil") || strings.Contains(out, "Exfiltrate") || strings.Contains(out, "altered") {
						t.Errorf("unverified content shown: %s", out)
					}
					if tc.name != "supporting file lies" && strings.Contains(errOut, formsRead) {
						t.Errorf("read a file of a skill that failed: %s", errOut)
					}
				}
				if tc.name == "list" && strings.Contains(errOut, "read skill://") {
					t.Errorf("listing read a file: %s", errOut)
				}
			})
		}
	}
}

// --json reports each file's checks; a failure is reported with
// verified:false and no content, and still exits 7.
func TestSkillJSON(t *testing.T) {
	t.Parallel()
	type report struct {
		Verified bool `json:"verified"`
		Files    []struct {
			URI    string  `json:"uri"`
			Text   *string `json:"text"`
			Checks []struct {
				Check, Status, Detail string
			} `json:"checks"`
		} `json:"files"`
	}
	code, out, errOut := runCLI(t, "", with(skillsPeer(mcptest.SkillsHonest, "auto"), "skill", "pdf-processing", "--json")...)
	var r report
	if code != command.ExitOK || json.Unmarshal([]byte(out), &r) != nil || !r.Verified || len(r.Files) != 1 || r.Files[0].Text == nil ||
		*r.Files[0].Text != mcptest.SkillBody || len(r.Files[0].Checks) != 3 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", with(skillsPeer(mcptest.SkillsDigest, "auto"), "skill", "pdf-processing", "--json")...)
	r = report{}
	if code != command.ExitVerify || json.Unmarshal([]byte(out), &r) != nil || r.Verified || len(r.Files) != 1 || r.Files[0].Text != nil ||
		r.Files[0].Checks[1].Status != "failed" || strings.Count(out, "\n") != 1 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

// A server's hostile text in a skill's name, description, URI and body
// reaches the terminal only made visible.
func TestSkillsPoison(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"skills"}, {"skill", "pdf-processing"}, {"skill", "pdf-processing", "references/FORMS.md"}} {
		code, out, errOut := runCLI(t, "", with(skillsPeer(mcptest.SkillsPoison, "auto"), args...)...)
		if code != command.ExitOK {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q", args, code, out, errOut)
		}
		if !safetext.Clean(out) || !safetext.Clean(errOut) || !strings.Contains(out+errOut, `«\e]0;pwned`) {
			t.Errorf("%v: raw control reached a person:\nstdout %q\nstderr %q", args, out, errOut)
		}
	}
}

// In a live session, skills and skill run in the daemon as one-shot
// commands do, exit 7 included.
func TestSkillsInSession(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	startSession(t, dir, "sk", peerArgs(mcptest.SkillsPrefix+mcptest.SkillsFormsLie)...)
	code, out, errOut := runLive(t, dir, nil, "skills", "--session", "sk", "--json")
	if code != command.ExitOK || !strings.Contains(out, `"uri":"skill://pdf-processing/SKILL.md"`) {
		t.Errorf("skills: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, errOut = runLive(t, dir, nil, "skill", "pdf-processing", "--session", "sk")
	if code != command.ExitOK || out != mcptest.SkillBody {
		t.Errorf("skill: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	code, out, errOut = runLive(t, dir, nil, "skill", "pdf-processing", "references/FORMS.md", "--session", "sk")
	if code != command.ExitVerify || out != "" || !strings.Contains(errOut, "references/FORMS.md failed verification") {
		t.Errorf("skill FILE: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
}

// read --dir lists a directory resource's direct children with every page
// of resources/directory/read, in both eras; a URI that is not a
// directory is the server's -32602; a server that did not declare
// directoryRead is not sent the method.
func TestReadDirectory(t *testing.T) {
	t.Parallel()
	for _, era := range []string{"modern", "legacy"} {
		for _, tc := range []cliCase{
			{name: "root", args: with(skillsPeer(mcptest.SkillsHonest, era), "read", "--dir", "skill://pdf-processing", "-v"), code: command.ExitOK,
				stdout: []string{"URI", "MIME TYPE", "skill://pdf-processing/SKILL.md", "SKILL.md    text/markdown    120", "skill://pdf-processing/references", "inode/directory"},
				stderr: []string{"directory skill://pdf-processing \n", "directory skill://pdf-processing page-2"}},
			{name: "subdirectory", args: with(skillsPeer(mcptest.SkillsHonest, era), "read", "--dir", "skill://pdf-processing/references"), code: command.ExitOK,
				stdout: []string{"skill://pdf-processing/references/FORMS.md", "FORMS.md"}, notStdout: []string{"SKILL.md"}},
			{name: "json", args: with(skillsPeer(mcptest.SkillsHonest, era), "read", "--dir", "skill://pdf-processing", "--json"), code: command.ExitOK,
				stdout: []string{`"uri":"skill://pdf-processing/SKILL.md"`, `"mimeType":"inode/directory"`}, jsonStdout: true},
			{name: "not a directory", args: with(skillsPeer(mcptest.SkillsHonest, era), "read", "--dir", "skill://pdf-processing/SKILL.md"), code: command.ExitProtocol,
				stderr: []string{"is not a directory"}},
			{name: "with --raw", args: with(skillsPeer(mcptest.SkillsHonest, era), "read", "--dir", "skill://x", "--raw"), code: command.ExitUsage,
				stderr: []string{"--dir lists a directory's children"}},
		} {
			t.Run(era+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				checkCase(t, tc)
			})
		}
	}
	t.Run("undeclared", func(t *testing.T) {
		t.Parallel()
		code, _, errOut := runCLI(t, "", with(peerArgs("demo"), "read", "--dir", "demo://text", "-v")...)
		if code != command.ExitProtocol || !strings.Contains(errOut, "directoryRead") || strings.Contains(errOut, `"method":"resources/directory/read"`) {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("json array", func(t *testing.T) {
		t.Parallel()
		code, out, _ := runCLI(t, "", with(skillsPeer(mcptest.SkillsHonest, "modern"), "read", "--dir", "skill://pdf-processing", "--json")...)
		var children []map[string]any
		if code != command.ExitOK || json.Unmarshal([]byte(out), &children) != nil || len(children) != 2 {
			t.Errorf("exit %d: %s", code, out)
		}
	})
}
