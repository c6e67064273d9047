package demoserver

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math"
)

// logoPNG draws the demo's 16x16 logo: a diagonal gradient inside a dark
// border. It is generated rather than embedded so the package carries no
// binary files, and it is deterministic so tests can compare bytes.
func logoPNG() []byte {
	const size = 16
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	for y := range size {
		for x := range size {
			c := color.NRGBA{R: uint8(40 + 12*x), G: uint8(90 + 8*y), B: 200, A: 255}
			if x == 0 || y == 0 || x == size-1 || y == size-1 {
				c = color.NRGBA{R: 20, G: 24, B: 40, A: 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding an in-memory image cannot fail
	}
	return buf.Bytes()
}

// toneWAV renders a quarter-second 440 Hz tone as a mono 16-bit PCM WAV file
// at 8 kHz: about 4 KB, small enough to sit in a tool result and real
// enough for a player to play.
func toneWAV() []byte {
	const (
		sampleRate = 8000
		samples    = sampleRate / 4
		channels   = 1
		bits       = 16
		dataSize   = samples * channels * bits / 8
	)
	var buf bytes.Buffer
	w := func(v any) {
		_ = binary.Write(&buf, binary.LittleEndian, v) // a bytes.Buffer never fails
	}
	buf.WriteString("RIFF")
	w(uint32(36 + dataSize))
	buf.WriteString("WAVE")
	buf.WriteString("fmt ")
	w(uint32(16)) // fmt chunk size
	w(uint16(1))  // PCM
	w(uint16(channels))
	w(uint32(sampleRate))
	w(uint32(sampleRate * channels * bits / 8)) // byte rate
	w(uint16(channels * bits / 8))              // block align
	w(uint16(bits))
	buf.WriteString("data")
	w(uint32(dataSize))
	for i := range samples {
		// A linear fade-out avoids a click at the end.
		amplitude := 0.3 * (1 - float64(i)/samples)
		v := amplitude * math.Sin(2*math.Pi*440*float64(i)/sampleRate)
		w(int16(v * math.MaxInt16))
	}
	return buf.Bytes()
}
