package dev.nepenthe.cluster.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * The receiving end of a copy: reads another replica's {@link CopySessions} chunk by chunk, as a
 * stream, so the copy goes straight into the receiver's staging folder.
 */
final class CopyFetch extends InputStream {

    private final RaftClient client;
    private final RaftPeerId source;
    private final long session = ThreadLocalRandom.current().nextLong();
    private long total = -1;
    private long offset;
    private byte[] chunk = new byte[0];
    private int at;

    CopyFetch(RaftClient client, RaftPeerId source) {
        this.client = client;
        this.source = source;
    }

    @Override
    public int read() throws IOException {
        if (!fill()) {
            return -1;
        }
        return chunk[at++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        if (!fill()) {
            return -1;
        }
        int n = Math.min(len, chunk.length - at);
        System.arraycopy(chunk, at, b, off, n);
        at += n;
        return n;
    }

    /** Bytes fetched so far. */
    long fetched() {
        return offset;
    }

    private boolean fill() throws IOException {
        if (at < chunk.length) {
            return true;
        }
        if (total >= 0 && offset >= total) {
            return false;
        }
        Arrays.fill(chunk, (byte) 0);
        RaftClientReply reply;
        // The blocking API: Ratis's ordered asynchronous stale read, sent as a new client's first
        // request, is never answered (seen with 3.2.0); this one is, and a copy has nothing else
        // to do meanwhile. Ratis retries a call that times out; the source answers a retried
        // first call with the same copy.
        try {
            reply =
                    client.io()
                            .sendStaleRead(
                                    Message.valueOf(
                                            ByteString.copyFrom(
                                                    CopySessions.query(session, offset))),
                                    0,
                                    source);
        } catch (IOException e) {
            throw new IOException(
                    "fetching a copy from "
                            + source
                            + " at offset "
                            + offset
                            + " failed: "
                            + e.getClass().getSimpleName(),
                    e);
        }
        if (!reply.isSuccess()) {
            throw new IOException(
                    "fetching a copy from "
                            + source
                            + " at offset "
                            + offset
                            + ": expected a chunk, got "
                            + (reply.getException() == null
                                    ? "a refusal"
                                    : reply.getException().getMessage()));
        }
        ByteBuffer b = reply.getMessage().getContent().asReadOnlyByteBuffer();
        if (b.remaining() < 8) {
            throw new IOException(
                    "fetching a copy from "
                            + source
                            + ": expected a chunk of at least 8 bytes, got "
                            + b.remaining());
        }
        long length = b.getLong();
        if (total >= 0 && length != total) {
            throw new IOException(
                    "fetching a copy from "
                            + source
                            + ": expected the copy to stay "
                            + total
                            + " bytes long, got "
                            + length);
        }
        total = length;
        if (b.remaining() == 0 && offset < total) {
            throw new IOException(
                    "fetching a copy from "
                            + source
                            + ": expected bytes from offset "
                            + offset
                            + " of "
                            + total
                            + ", got none");
        }
        chunk = new byte[b.remaining()];
        b.get(chunk);
        at = 0;
        offset += chunk.length;
        return chunk.length > 0;
    }

    @Override
    public void close() {
        Arrays.fill(chunk, (byte) 0);
    }
}
