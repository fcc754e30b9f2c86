package hostapi

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"trap-sandbox/internal/jsonscan"
)

// parsePlainBody reads the /requests body every client sends without reflection: a JSON
// object whose keys are "type", "payload" and "timeoutMs" spelled exactly, each at most
// once, "type" a string without escapes, "timeoutMs" an integer or null. It returns what
// json.Unmarshal would (FuzzPlainBodyIsUnmarshals checks it); false for any other body,
// which json.Unmarshal then reads, so that its answers stay the API's.
func parsePlainBody(body []byte) (req RequestBody, ok bool) {
	if !jsonscan.Valid(body) {
		return RequestBody{}, false
	}
	// Valid JSON from here on: only its shape is checked.
	i := jsonscan.SkipSpace(body, 0)
	if body[i] != '{' {
		return RequestBody{}, false
	}
	i = jsonscan.SkipSpace(body, i+1)
	if body[i] == '}' {
		return req, true
	}
	var seenType, seenPayload, seenTimeout bool
	for {
		keyEnd := stringEnd(body, i)
		if keyEnd < 0 {
			return RequestBody{}, false // a key with an escape
		}
		key := body[i+1 : keyEnd-1]
		i = jsonscan.SkipSpace(body, jsonscan.SkipSpace(body, keyEnd)+1) // past the colon
		end := valueEnd(body, i)
		value := body[i:end]
		switch string(key) {
		case "type":
			s, ok := plainString(value)
			if !ok || seenType {
				return RequestBody{}, false
			}
			req.Type, seenType = s, true
		case "payload":
			if seenPayload {
				return RequestBody{}, false
			}
			req.Payload, seenPayload = bytes.Clone(value), true
		case "timeoutMs":
			if seenTimeout {
				return RequestBody{}, false
			}
			seenTimeout = true
			if string(value) != "null" {
				ms, err := strconv.ParseInt(string(value), 10, 64)
				if err != nil {
					return RequestBody{}, false // a fraction, an exponent, out of range, not a number
				}
				req.TimeoutMs = &ms
			}
		default:
			return RequestBody{}, false
		}
		i = jsonscan.SkipSpace(body, end)
		if body[i] == '}' {
			return req, true
		}
		i = jsonscan.SkipSpace(body, i+1) // past the comma
	}
}

// plainString is the text of a JSON string token without escapes in valid UTF-8.
func plainString(token []byte) (string, bool) {
	if len(token) < 2 || token[0] != '"' || bytes.IndexByte(token, '\\') >= 0 || !utf8.Valid(token) {
		return "", false
	}
	return string(token[1 : len(token)-1]), true
}

// stringEnd is the index after the string token that starts at data[i], or -1 when it holds
// an escape.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			return -1
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd is the index after the value that starts at data[i], in valid JSON.
func valueEnd(data []byte, i int) int {
	depth := 0
	for j := i; j < len(data); j++ {
		switch data[j] {
		case '"':
			j++
			for ; data[j] != '"'; j++ {
				if data[j] == '\\' {
					j++
				}
			}
			if depth == 0 {
				return j + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j // the end of the enclosing object
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return j
			}
		}
	}
	return len(data)
}
