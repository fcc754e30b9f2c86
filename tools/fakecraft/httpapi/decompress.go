package httpapi

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// decompressed is the body a program reads, as CC's pipeline (Netty's
// HttpContentDecompressor before its handler) hands it over: a response whose first
// Content-Encoding is gzip or deflate (or x-gzip, x-deflate; any case, spaces trimmed) is
// decoded, anything else (identity, br, a list of encodings) comes as it was sent. decoded
// says whether a decoder was put in front. A body that does not decode is a read error,
// which CC reports as "Could not connect".
func decompressed(header http.Header, body io.Reader) (r io.Reader, decoded bool) {
	values := header.Values("Content-Encoding")
	if len(values) == 0 {
		return body, false
	}
	switch strings.ToLower(strings.TrimSpace(values[0])) {
	case "gzip", "x-gzip":
		return &lazyDecoder{src: bufio.NewReader(body), open: openGzip}, true
	case "deflate", "x-deflate":
		return &lazyDecoder{src: bufio.NewReader(body), open: openDeflate}, true
	}
	return body, false
}

// lazyDecoder opens its decoder at the first read, so an empty body (a HEAD response, a
// 204) decodes to nothing, as Netty's decoder given no input yields nothing.
type lazyDecoder struct {
	src  *bufio.Reader
	open func(*bufio.Reader) (io.Reader, error)
	dec  io.Reader
}

func (l *lazyDecoder) Read(p []byte) (int, error) {
	if l.dec == nil {
		if _, err := l.src.Peek(1); err != nil {
			return 0, err // io.EOF for an empty body
		}
		dec, err := l.open(l.src)
		if err != nil {
			return 0, err
		}
		l.dec = dec
	}
	return l.dec.Read(p)
}

// openGzip reads one gzip member, as Netty does: bytes after it are ignored.
func openGzip(src *bufio.Reader) (io.Reader, error) {
	zr, err := gzip.NewReader(src)
	if err != nil {
		return nil, err
	}
	zr.Multistream(false)
	return zr, nil
}

// openDeflate reads a zlib stream or, for the servers that send one, a bare deflate
// stream: Netty's lenient ZLIB_OR_NONE takes the first two bytes for a zlib header when
// they name deflate with a 32 KiB window and pass the header's check.
func openDeflate(src *bufio.Reader) (io.Reader, error) {
	head, err := src.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(head) == 2 {
		word := int(head[0])<<8 | int(head[1])
		if word&0x7800 == 0x7800 && word%31 == 0 {
			return zlib.NewReader(src)
		}
	}
	return flate.NewReader(src), nil
}

// ccResponseHeaders edits the header table as CC's pipeline does before the program sees
// it: when the body was decoded, Content-Encoding goes and a Content-Length gives way to
// transfer-encoding: chunked; then a Content-Length left is replaced by the length of the
// body read (0 for a HEAD response), as CC's HttpRequestHandler sets it. Netty sets a
// header under its own lower-case name, so those come back as "transfer-encoding" and
// "content-length".
func ccResponseHeaders(h map[string]string, decoded bool, bodyLen int) map[string]string {
	if decoded {
		deleteHeader(h, "Content-Encoding")
		if deleteHeader(h, "Content-Length") {
			deleteHeader(h, "Transfer-Encoding")
			h["transfer-encoding"] = "chunked"
		}
	}
	if deleteHeader(h, "Content-Length") {
		h["content-length"] = strconv.Itoa(bodyLen)
	}
	return h
}

// deleteHeader removes name, in any case, from h and reports whether it was there.
func deleteHeader(h map[string]string, name string) bool {
	found := false
	for key := range h {
		if strings.EqualFold(key, name) {
			delete(h, key)
			found = true
		}
	}
	return found
}
