package envelope

import (
	"fmt"
	"testing"
)

// BenchmarkSealOpen is the cost of one 200-byte value sealed (on the
// leader, before its proposal) and opened (when answered).
func BenchmarkSealOpen(b *testing.B) {
	dek := NewKey()
	plain := []byte(fmt.Sprintf(`{"order":"%0180d"}`, 42))
	h := Header{Gen: 1, Field: "payload", Ctx: "job_01HX3F7Q2M8V4K9N6B5C1D0E2G"}
	c := NewCipher(dek)
	b.Run("seal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Seal("space", h, plain)
		}
	})
	sealed := c.Seal("space", h, plain)
	b.Run("open", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := OpenAll(sealed, func(h Header, blob []byte) ([]byte, error) { return c.Open("space", h, blob) }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
