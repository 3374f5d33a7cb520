package schema

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The payloads of BenchmarkCheck: a small one (an order id and an
// amount, ~60 bytes) and a medium one (an order with 50 line items,
// ~5 KiB), valid and with one rule broken in the last place looked at.
const benchSchema = `{"type":"object","required":["order_id","amount","currency"],"additionalProperties":false,
"properties":{"order_id":{"type":"string","pattern":"^ord_[0-9a-z]+$"},"amount":{"type":"integer","minimum":0},
"currency":{"enum":["EUR","USD","GBP"]},"customer":{"type":"object","properties":{"email":{"type":"string","maxLength":254},
"name":{"type":"string"}}},"items":{"type":"array","maxItems":100,"items":{"type":"object","required":["sku","qty","price"],
"properties":{"sku":{"type":"string","minLength":1},"qty":{"type":"integer","minimum":1},"price":{"type":"integer","minimum":0},
"note":{"type":"string","maxLength":200}}}}}}`

func benchPayloads() map[string][]byte {
	small := []byte(`{"order_id":"ord_42x","amount":1999,"currency":"EUR"}`)
	smallBad := []byte(`{"order_id":"ord_42x","amount":-1,"currency":"EUR"}`)
	items := make([]map[string]any, 50)
	for i := range items {
		items[i] = map[string]any{"sku": fmt.Sprintf("sku-%04d", i), "qty": 1 + i%3, "price": 100 * i, "note": "gift wrap, please"}
	}
	order := map[string]any{"order_id": "ord_7k2", "amount": 123456, "currency": "USD",
		"customer": map[string]any{"email": "someone@example.com", "name": "Some One"}, "items": items}
	medium, _ := json.Marshal(order)
	items[49]["qty"] = 0
	mediumBad, _ := json.Marshal(order)
	return map[string][]byte{"small/valid": small, "small/invalid": smallBad, "medium/valid": medium, "medium/invalid": mediumBad}
}

// BenchmarkCheck is the cost of checking one payload against a compiled
// schema (decoding the payload included): what a typed queue adds to an
// enqueue on the leader. docs/BENCHMARKS.md, "Payload schemas".
func BenchmarkCheck(b *testing.B) {
	c, err := Canonical("schema", []byte(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	s, err := Compile(c)
	if err != nil {
		b.Fatal(err)
	}
	p := benchPayloads()
	for _, name := range []string{"small/valid", "small/invalid", "medium/valid", "medium/invalid"} {
		payload := p[name]
		valid := name[len(name)-5:] == "valid" && name[len(name)-7:] != "invalid"
		b.Run(fmt.Sprintf("%s/%dB", name, len(payload)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Check("payload", payload); (err == nil) != valid {
					b.Fatalf("%s: %v", name, err)
				}
			}
		})
	}
}

// BenchmarkCompile is a cache miss: one schema compiled.
func BenchmarkCompile(b *testing.B) {
	c, err := Canonical("schema", []byte(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(c); err != nil {
			b.Fatal(err)
		}
	}
}
