package dev.nepenthe.server.cli;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * An input stream that counts the bytes read through it, so the progress bar of {@code nepenthe
 * ingest} can say how far into a JSON Lines file the reader is. Not safe for concurrent use: the
 * thread that reads is the one that asks for the count.
 */
final class CountingInputStream extends FilterInputStream {
    private long count;

    CountingInputStream(InputStream in) {
        super(in);
    }

    /**
     * The bytes read so far.
     *
     * @return the count
     */
    long count() {
        return count;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b >= 0) {
            count++;
        }
        return b;
    }

    @Override
    public int read(byte[] buf, int off, int len) throws IOException {
        int n = super.read(buf, off, len);
        if (n > 0) {
            count += n;
        }
        return n;
    }
}
