package eval

import (
	"strings"

	"github.com/mcpi-dev/mcpi/internal/surface"
)

func surfaceRead(doc string) (*surface.Snapshot, error) { return surface.Read(strings.NewReader(doc)) }
