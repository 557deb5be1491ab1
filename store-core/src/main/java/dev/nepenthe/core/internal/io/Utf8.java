package dev.nepenthe.core.internal.io;

/**
 * UTF-8 lengths and encodings of strings that may be subject data (ids, subjects, text), into a
 * buffer the caller owns and wipes: {@code String.getBytes} would leave a copy of the plaintext on
 * the heap for the collector, one per call, and at an open of a million records that was a fifth of
 * the allocation. Byte for byte what {@code getBytes(UTF_8)} gives, including its replacement of an
 * unpaired surrogate by {@code '?'}.
 */
public final class Utf8 {
    private Utf8() {}

    /** Bytes the string encodes to at most: three per char. */
    public static int maxLength(String s) {
        return 3 * s.length();
    }

    /** {@code s.getBytes(UTF_8).length}, without the copy. */
    public static int length(String s) {
        int n = 0;
        for (int i = 0, len = s.length(); i < len; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c)
                    && i + 1 < len
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                n += 1; // unpaired: '?'
            } else {
                n += 3;
            }
        }
        return n;
    }

    /**
     * Writes {@code s.getBytes(UTF_8)} at {@code off}; {@code dst} has room for {@link
     * #length(String)} bytes from there.
     *
     * @return the number of bytes written
     */
    public static int encode(String s, byte[] dst, int off) {
        int p = off;
        for (int i = 0, len = s.length(); i < len; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                dst[p++] = (byte) c;
            } else if (c < 0x800) {
                dst[p++] = (byte) (0xC0 | (c >> 6));
                dst[p++] = (byte) (0x80 | (c & 0x3F));
            } else if (Character.isHighSurrogate(c)
                    && i + 1 < len
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                dst[p++] = (byte) (0xF0 | (cp >> 18));
                dst[p++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                dst[p++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                dst[p++] = (byte) (0x80 | (cp & 0x3F));
            } else if (Character.isSurrogate(c)) {
                dst[p++] = '?';
            } else {
                dst[p++] = (byte) (0xE0 | (c >> 12));
                dst[p++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                dst[p++] = (byte) (0x80 | (c & 0x3F));
            }
        }
        return p - off;
    }
}
