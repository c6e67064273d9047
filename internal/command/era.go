package command

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"

	"github.com/mcpi-dev/mcpi/internal/eras"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// EraKey identifies the server configuration o names.
func (o *TargetOptions) EraKey() string {
	b, _ := json.Marshal(struct {
		Command   []string
		Env       []string
		Dir       string
		URL       string
		Transport string
	}{o.Command, o.Env, o.Dir, o.URL, o.Transport})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// chooseEra is the era to start with: --era, else $MCPI_ERA, else the one
// remembered for this server, else auto; reason says why when it was not
// --era; remembered says it came from the memory.
func (o *TargetOptions) chooseEra(warn func(string)) (era, reason string, remembered bool) {
	if o.Era != "" {
		return o.Era, "", false
	}
	if e := os.Getenv("MCPI_ERA"); e != "" {
		return e, "forced by MCPI_ERA=" + e, false
	}
	if o.Protocol != "" {
		return session.EraAuto, "", false
	}
	if e, ok := eras.Lookup(o.EraKey(), warn); ok && (e == session.EraLegacy || e == session.EraModern) {
		return e, "remembered: this server spoke it last time (" + eras.File() + "; --era auto detects again)", true
	}
	return session.EraAuto, "", false
}
