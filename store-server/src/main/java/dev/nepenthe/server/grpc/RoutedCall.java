package dev.nepenthe.server.grpc;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * One call a {@link Replication} carries to where it is decided: the method's full gRPC name, who
 * called (as the entry node's token said), and the request's bytes as they parsed there. A write
 * travels in this form to every replica, which runs it with {@link WriteApplier} exactly as the
 * service would have run it here; the caller's tenant and role go with it, so the service's own
 * checks decide on every replica alike.
 *
 * @param method the full method name, {@code nepenthe.v1.Records/Upsert}
 * @param tenant the caller's tenant
 * @param role the caller's role, by its enum name ({@code TENANT}, {@code TENANT_ADMIN}, {@code
 *     STORE_OPERATOR})
 * @param tokenId a short id of the caller's token (a prefix of its hash, never the token)
 * @param request the request message's bytes
 */
// Carried, never compared or hashed: the array is the message body as it travels.
@SuppressWarnings("ArrayRecordComponent")
public record RoutedCall(
        String method, String tenant, String role, String tokenId, byte[] request) {

    private static final int VERSION = 1;

    /** Builds a call from the caller of the current gRPC call. */
    static RoutedCall of(String method, Caller caller, byte[] request) {
        return new RoutedCall(
                method, caller.tenant(), caller.role().name(), caller.tokenId(), request);
    }

    /** The caller this call runs as. */
    Caller caller() {
        Role r;
        try {
            r = Role.valueOf(role);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "routed call: expected a role TENANT, TENANT_ADMIN or STORE_OPERATOR, got "
                            + role.length()
                            + " characters of something else",
                    e);
        }
        return new Caller(tenant, r, tokenId);
    }

    /**
     * The call as bytes: a version, the four strings and the request.
     *
     * @return the encoded call
     */
    public byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(request.length + 96);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            for (String s : new String[] {method, tenant, role, tokenId}) {
                byte[] b = s.getBytes(StandardCharsets.UTF_8);
                out.writeInt(b.length);
                out.write(b);
            }
            out.writeInt(request.length);
            out.write(request);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
        return bytes.toByteArray();
    }

    /**
     * Reads what {@link #encode} wrote.
     *
     * @param bytes the encoded call
     * @return the call
     * @throws IllegalArgumentException if the bytes are not an encoded call of this version
     */
    public static RoutedCall decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new IllegalArgumentException(
                        "routed call: expected version " + VERSION + ", got " + version);
            }
            String[] s = new String[4];
            for (int i = 0; i < s.length; i++) {
                s[i] = new String(chunk(in, bytes.length), StandardCharsets.UTF_8);
            }
            byte[] request = chunk(in, bytes.length);
            if (in.available() != 0) {
                throw new IllegalArgumentException(
                        "routed call: " + in.available() + " bytes after the request");
            }
            return new RoutedCall(s[0], s[1], s[2], s[3], request);
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    "routed call: expected "
                            + bytes.length
                            + " bytes to hold a whole call, cut short",
                    e);
        }
    }

    private static byte[] chunk(DataInputStream in, int limit) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > limit) {
            throw new IllegalArgumentException(
                    "routed call: expected a length from 0 to " + limit + ", got " + n);
        }
        byte[] b = in.readNBytes(n);
        if (b.length != n) {
            throw new IllegalArgumentException(
                    "routed call: expected " + n + " more bytes, got " + b.length + " (cut short)");
        }
        return b;
    }
}
