package record

import (
	"bytes"
	"io"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

func bigFrame(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"`)
	for b.Len() < size {
		b.WriteString(`lorem ipsum dolor sit amet, \"consectetur\"\n adipiscing élit `)
	}
	b.WriteString(`"}]}}`)
	return b.Bytes()
}

func benchmarkObserve(b *testing.B, frame []byte, opts Options) {
	w := NewWriter(io.Discard, Header{}, opts)
	defer w.Close()
	e := transport.Event{Kind: transport.KindFrame, Dir: transport.Incoming, Data: frame}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		w.Observe(e)
	}
}

func BenchmarkObserveSmallFrame(b *testing.B) {
	benchmarkObserve(b, []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"hello"}]}}`), Options{})
}

func BenchmarkObserveLargeFrame(b *testing.B) {
	benchmarkObserve(b, bigFrame(50<<20), Options{})
}

func BenchmarkObserveLargeFrameSecrets(b *testing.B) {
	benchmarkObserve(b, bigFrame(50<<20), Options{SecretValues: []string{"sk-0123456789"}})
}

func BenchmarkReadLargeFrame(b *testing.B) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{})
	frame := bigFrame(50 << 20)
	w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Incoming, Data: frame})
	w.Close()
	trace := buf.Bytes()
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(trace))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
