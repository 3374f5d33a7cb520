package wire

// MaxJSONDepth bounds how deeply arrays and objects nest in a JSON value a
// job stores (a payload, a result, progress, a checkpoint). Past a few
// thousand levels the workers' own decoders give up (Go's protobuf at
// about 3,300 objects, Python's json at its recursion limit), and a job
// no worker can read would come back to every one of them; real payloads
// nest a few levels.
const MaxJSONDepth = 256

// JSONDepth is how deeply arrays and objects nest in raw, which must be
// valid JSON (brackets inside strings do not count): 0 for a scalar.
func JSONDepth(raw []byte) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte cannot end the string
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		}
	}
	return deepest
}
