package dev.nepenthe.server.grpc;

import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * What a {@link RoutedCall} came to: a response's bytes, or the status the service ended it with.
 * It travels back from wherever the call was decided to the node the client called.
 *
 * @param code the gRPC status code's value (0 for OK)
 * @param description the status description, empty when none
 * @param response the response message's bytes; empty unless OK
 */
// Carried, never compared or hashed: the array is the message body as it travels.
@SuppressWarnings("ArrayRecordComponent")
public record RoutedResult(int code, String description, byte[] response) {

    private static final int VERSION = 1;

    /**
     * A failed result.
     *
     * @param status the status to end the call with
     * @return the result
     */
    public static RoutedResult of(Status status) {
        String d = status.getDescription();
        return new RoutedResult(status.getCode().value(), d == null ? "" : d, new byte[0]);
    }

    /**
     * Whether the call succeeded.
     *
     * @return true when the code is OK
     */
    public boolean ok() {
        return code == Status.Code.OK.value();
    }

    /**
     * The status this result ends a call with.
     *
     * @return the status, with the description when there is one
     */
    public Status status() {
        Status s = Status.fromCodeValue(code);
        return description.isEmpty() ? s : s.withDescription(description);
    }

    /**
     * The result as bytes.
     *
     * @return the encoded result
     */
    public byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(response.length + 64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            byte[] d = description.getBytes(StandardCharsets.UTF_8);
            out.writeByte(VERSION);
            out.writeInt(code);
            out.writeInt(d.length);
            out.write(d);
            out.writeInt(response.length);
            out.write(response);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
        return bytes.toByteArray();
    }

    /**
     * Reads what {@link #encode} wrote.
     *
     * @param bytes the encoded result
     * @return the result
     * @throws IllegalArgumentException if the bytes are not an encoded result of this version
     */
    public static RoutedResult decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new IllegalArgumentException(
                        "routed result: expected version " + VERSION + ", got " + version);
            }
            int code = in.readInt();
            byte[] d = exactly(in, length(in, bytes.length));
            byte[] response = exactly(in, length(in, bytes.length));
            return new RoutedResult(code, new String(d, StandardCharsets.UTF_8), response);
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    "routed result: expected "
                            + bytes.length
                            + " bytes to hold a result, cut short",
                    e);
        }
    }

    private static byte[] exactly(DataInputStream in, int n) throws IOException {
        byte[] b = in.readNBytes(n);
        if (b.length != n) {
            throw new IllegalArgumentException(
                    "routed result: expected "
                            + n
                            + " more bytes, got "
                            + b.length
                            + " (cut short)");
        }
        return b;
    }

    private static int length(DataInputStream in, int limit) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > limit) {
            throw new IllegalArgumentException(
                    "routed result: expected a length from 0 to " + limit + ", got " + n);
        }
        return n;
    }
}
