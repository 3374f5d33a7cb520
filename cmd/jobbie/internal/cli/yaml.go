package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// -o yaml is the same data as -o json: the command writes its JSON, and
// the writer the root puts under a command given -o yaml turns each JSON
// value it receives into a YAML document, fields in the API's order. One
// place does it, so every command that prints JSON prints YAML too.

// InstallYAML makes every command under root that takes -o print YAML
// for -o yaml.
func InstallYAML(root *cobra.Command) {
	var yw *yamlWriter
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if f := cmd.Flags().Lookup("output"); f != nil && f.Value.String() == OutYAML {
			yw = &yamlWriter{out: cmd.OutOrStdout()}
			cmd.SetOut(yw)
		}
		return nil
	}
	root.PersistentPostRunE = func(*cobra.Command, []string) error {
		if yw == nil {
			return nil
		}
		return yw.Flush()
	}
}

// yamlWriter converts a stream of JSON values into YAML documents as each
// value completes. Text that is not JSON passes through as it is.
type yamlWriter struct {
	out  io.Writer
	buf  bytes.Buffer
	docs int
}

func (w *yamlWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	for {
		trimmed := bytes.TrimLeft(w.buf.Bytes(), " \t\r\n")
		if len(trimmed) == 0 {
			w.buf.Reset()
			return len(p), nil
		}
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		var raw json.RawMessage
		err := dec.Decode(&raw)
		var syn *json.SyntaxError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return len(p), nil // the value is not all here yet
		case errors.As(err, &syn) || err != nil:
			// Not JSON: pass the text on.
			_, werr := w.out.Write(trimmed)
			w.buf.Reset()
			if werr != nil {
				return 0, werr
			}
			return len(p), nil
		}
		rest := trimmed[dec.InputOffset():]
		if err := w.document(raw); err != nil {
			return 0, err
		}
		next := append([]byte(nil), rest...)
		w.buf.Reset()
		w.buf.Write(next)
	}
}

// document writes one JSON value as a YAML document, "---" before every
// one after the first.
func (w *yamlWriter) document(raw []byte) error {
	b, err := jsonToYAML(raw)
	if err != nil {
		return err
	}
	if w.docs > 0 {
		if _, err := io.WriteString(w.out, "---\n"); err != nil {
			return err
		}
	}
	w.docs++
	_, err = w.out.Write(b)
	return err
}

// Flush writes what is left that never became a whole JSON value.
func (w *yamlWriter) Flush() error {
	if rest := bytes.TrimSpace(w.buf.Bytes()); len(rest) > 0 {
		w.buf.Reset()
		_, err := fmt.Fprintf(w.out, "%s\n", rest)
		return err
	}
	return nil
}

// yaml11Bool are the words YAML 1.1 reads as booleans, which the YAML 1.2
// encoder leaves unquoted.
var yaml11Bool = map[string]bool{"y": true, "yes": true, "n": true, "no": true, "on": true, "off": true}

// jsonToYAML is raw as YAML in block style: YAML reads JSON, and with
// the JSON's flow and quoting styles cleared the encoder picks its own
// (quoting a string that would read as another type).
func jsonToYAML(raw []byte) ([]byte, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(raw, &n); err != nil {
		return nil, err
	}
	var plain func(*yaml.Node)
	plain = func(n *yaml.Node) {
		n.Style = 0
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && yaml11Bool[strings.ToLower(n.Value)] {
			n.Style = yaml.DoubleQuotedStyle // YAML 1.1 readers would take it for a boolean
		}
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(&n)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
