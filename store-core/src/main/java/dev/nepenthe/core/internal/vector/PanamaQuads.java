package dev.nepenthe.core.internal.vector;

import static dev.nepenthe.core.internal.vector.PanamaPairs.F16;
import static dev.nepenthe.core.internal.vector.PanamaPairs.halve16;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;

/**
 * One query against several stored vectors at once, 16 lanes wide: each load of the query feeds
 * four (or two) vectors' fused multiply-adds, sixteen accumulators in all (AVX-512 has 32
 * registers), and the vectors' loads are independent, so their cache misses overlap. Every result
 * is bit for bit the single-pair score of {@link PanamaPairs}.
 *
 * <p>As in {@link PanamaPairs}, the stored vectors are an array {@code ba} or a segment {@code bs}
 * (the other is null) and each load picks between the two Vector API calls in place; that class
 * says why this is not a loader object.
 */
final class PanamaQuads {

    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    private PanamaQuads() {}

    /**
     * Four dot products in the order of {@link PanamaPairs#dot}: each query load feeds four
     * vectors' FMAs.
     */
    static void dotQuad16(
            float[] q,
            int qo,
            float[] ba,
            MemorySegment bs,
            long o0,
            long o1,
            long o2,
            long o3,
            int len,
            float[] out,
            int at,
            int keep) {
        FloatVector a0 = FloatVector.zero(F16),
                a1 = FloatVector.zero(F16),
                a2 = FloatVector.zero(F16),
                a3 = FloatVector.zero(F16);
        FloatVector b0 = FloatVector.zero(F16),
                b1 = FloatVector.zero(F16),
                b2 = FloatVector.zero(F16),
                b3 = FloatVector.zero(F16);
        FloatVector c0 = FloatVector.zero(F16),
                c1 = FloatVector.zero(F16),
                c2 = FloatVector.zero(F16),
                c3 = FloatVector.zero(F16);
        FloatVector d0 = FloatVector.zero(F16),
                d1 = FloatVector.zero(F16),
                d2 = FloatVector.zero(F16),
                d3 = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        for (; i < end64; i += 64) {
            FloatVector q0 = FloatVector.fromArray(F16, q, qo + i);
            a0 =
                    q0.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i) * Float.BYTES, NATIVE)),
                            a0);
            b0 =
                    q0.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i) * Float.BYTES, NATIVE)),
                            b0);
            c0 =
                    q0.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o2 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o2 + i) * Float.BYTES, NATIVE)),
                            c0);
            d0 =
                    q0.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o3 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o3 + i) * Float.BYTES, NATIVE)),
                            d0);
            FloatVector q1 = FloatVector.fromArray(F16, q, qo + i + 16);
            a1 =
                    q1.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i + 16)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i + 16) * Float.BYTES, NATIVE)),
                            a1);
            b1 =
                    q1.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i + 16)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i + 16) * Float.BYTES, NATIVE)),
                            b1);
            c1 =
                    q1.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o2 + i + 16)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o2 + i + 16) * Float.BYTES, NATIVE)),
                            c1);
            d1 =
                    q1.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o3 + i + 16)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o3 + i + 16) * Float.BYTES, NATIVE)),
                            d1);
            FloatVector q2 = FloatVector.fromArray(F16, q, qo + i + 32);
            a2 =
                    q2.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i + 32)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i + 32) * Float.BYTES, NATIVE)),
                            a2);
            b2 =
                    q2.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i + 32)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i + 32) * Float.BYTES, NATIVE)),
                            b2);
            c2 =
                    q2.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o2 + i + 32)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o2 + i + 32) * Float.BYTES, NATIVE)),
                            c2);
            d2 =
                    q2.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o3 + i + 32)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o3 + i + 32) * Float.BYTES, NATIVE)),
                            d2);
            FloatVector q3 = FloatVector.fromArray(F16, q, qo + i + 48);
            a3 =
                    q3.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i + 48)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i + 48) * Float.BYTES, NATIVE)),
                            a3);
            b3 =
                    q3.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i + 48)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i + 48) * Float.BYTES, NATIVE)),
                            b3);
            c3 =
                    q3.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o2 + i + 48)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o2 + i + 48) * Float.BYTES, NATIVE)),
                            c3);
            d3 =
                    q3.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o3 + i + 48)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o3 + i + 48) * Float.BYTES, NATIVE)),
                            d3);
        }
        FloatVector ra = a0.add(a2).add(a1.add(a3));
        FloatVector rb = b0.add(b2).add(b1.add(b3));
        FloatVector rc = c0.add(c2).add(c1.add(c3));
        FloatVector rd = d0.add(d2).add(d1.add(d3));
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector qv = FloatVector.fromArray(F16, q, qo + i);
            ra =
                    qv.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i) * Float.BYTES, NATIVE)),
                            ra);
            rb =
                    qv.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i) * Float.BYTES, NATIVE)),
                            rb);
            rc =
                    qv.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o2 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o2 + i) * Float.BYTES, NATIVE)),
                            rc);
            rd =
                    qv.fma(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o3 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o3 + i) * Float.BYTES, NATIVE)),
                            rd);
        }
        float sa = halve16(ra), sb = halve16(rb), sc = halve16(rc), sd = halve16(rd);
        for (; i < len; i++) {
            float x = q[qo + i];
            sa =
                    Math.fma(
                            x,
                            (ba != null
                                    ? ba[(int) o0 + i]
                                    : bs.getAtIndex(ValueLayout.JAVA_FLOAT, o0 + i)),
                            sa);
            sb =
                    Math.fma(
                            x,
                            (ba != null
                                    ? ba[(int) o1 + i]
                                    : bs.getAtIndex(ValueLayout.JAVA_FLOAT, o1 + i)),
                            sb);
            sc =
                    Math.fma(
                            x,
                            (ba != null
                                    ? ba[(int) o2 + i]
                                    : bs.getAtIndex(ValueLayout.JAVA_FLOAT, o2 + i)),
                            sc);
            sd =
                    Math.fma(
                            x,
                            (ba != null
                                    ? ba[(int) o3 + i]
                                    : bs.getAtIndex(ValueLayout.JAVA_FLOAT, o3 + i)),
                            sd);
        }
        out[at] = sa;
        if (keep > 1) {
            out[at + 1] = sb;
        }
        if (keep > 2) {
            out[at + 2] = sc;
        }
        if (keep > 3) {
            out[at + 3] = sd;
        }
    }

    /**
     * Four squared distances in the order of {@link PanamaPairs#squareDistance}, each query load
     * feeding four.
     */
    static void squareQuad16(
            float[] q,
            int qo,
            float[] ba,
            MemorySegment bs,
            long o0,
            long o1,
            long o2,
            long o3,
            int len,
            float[] out,
            int at,
            int keep) {
        FloatVector a0 = FloatVector.zero(F16),
                a1 = FloatVector.zero(F16),
                a2 = FloatVector.zero(F16),
                a3 = FloatVector.zero(F16);
        FloatVector b0 = FloatVector.zero(F16),
                b1 = FloatVector.zero(F16),
                b2 = FloatVector.zero(F16),
                b3 = FloatVector.zero(F16);
        FloatVector c0 = FloatVector.zero(F16),
                c1 = FloatVector.zero(F16),
                c2 = FloatVector.zero(F16),
                c3 = FloatVector.zero(F16);
        FloatVector d0 = FloatVector.zero(F16),
                d1 = FloatVector.zero(F16),
                d2 = FloatVector.zero(F16),
                d3 = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        for (; i < end64; i += 64) {
            FloatVector t;
            FloatVector q0 = FloatVector.fromArray(F16, q, qo + i);
            t =
                    q0.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i) * Float.BYTES, NATIVE)));
            a0 = t.fma(t, a0);
            t =
                    q0.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i) * Float.BYTES, NATIVE)));
            b0 = t.fma(t, b0);
            t =
                    q0.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o2 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o2 + i) * Float.BYTES, NATIVE)));
            c0 = t.fma(t, c0);
            t =
                    q0.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o3 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o3 + i) * Float.BYTES, NATIVE)));
            d0 = t.fma(t, d0);
            FloatVector q1 = FloatVector.fromArray(F16, q, qo + i + 16);
            t =
                    q1.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i + 16)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i + 16) * Float.BYTES, NATIVE)));
            a1 = t.fma(t, a1);
            t =
                    q1.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i + 16)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i + 16) * Float.BYTES, NATIVE)));
            b1 = t.fma(t, b1);
            t =
                    q1.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o2 + i + 16)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o2 + i + 16) * Float.BYTES, NATIVE)));
            c1 = t.fma(t, c1);
            t =
                    q1.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o3 + i + 16)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o3 + i + 16) * Float.BYTES, NATIVE)));
            d1 = t.fma(t, d1);
            FloatVector q2 = FloatVector.fromArray(F16, q, qo + i + 32);
            t =
                    q2.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i + 32)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i + 32) * Float.BYTES, NATIVE)));
            a2 = t.fma(t, a2);
            t =
                    q2.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i + 32)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i + 32) * Float.BYTES, NATIVE)));
            b2 = t.fma(t, b2);
            t =
                    q2.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o2 + i + 32)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o2 + i + 32) * Float.BYTES, NATIVE)));
            c2 = t.fma(t, c2);
            t =
                    q2.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o3 + i + 32)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o3 + i + 32) * Float.BYTES, NATIVE)));
            d2 = t.fma(t, d2);
            FloatVector q3 = FloatVector.fromArray(F16, q, qo + i + 48);
            t =
                    q3.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i + 48)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i + 48) * Float.BYTES, NATIVE)));
            a3 = t.fma(t, a3);
            t =
                    q3.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i + 48)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i + 48) * Float.BYTES, NATIVE)));
            b3 = t.fma(t, b3);
            t =
                    q3.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o2 + i + 48)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o2 + i + 48) * Float.BYTES, NATIVE)));
            c3 = t.fma(t, c3);
            t =
                    q3.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o3 + i + 48)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o3 + i + 48) * Float.BYTES, NATIVE)));
            d3 = t.fma(t, d3);
        }
        FloatVector ra = a0.add(a2).add(a1.add(a3));
        FloatVector rb = b0.add(b2).add(b1.add(b3));
        FloatVector rc = c0.add(c2).add(c1.add(c3));
        FloatVector rd = d0.add(d2).add(d1.add(d3));
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector qv = FloatVector.fromArray(F16, q, qo + i);
            FloatVector t;
            t =
                    qv.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i) * Float.BYTES, NATIVE)));
            ra = t.fma(t, ra);
            t =
                    qv.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i) * Float.BYTES, NATIVE)));
            rb = t.fma(t, rb);
            t =
                    qv.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o2 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o2 + i) * Float.BYTES, NATIVE)));
            rc = t.fma(t, rc);
            t =
                    qv.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o3 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o3 + i) * Float.BYTES, NATIVE)));
            rd = t.fma(t, rd);
        }
        float sa = halve16(ra), sb = halve16(rb), sc = halve16(rc), sd = halve16(rd);
        for (; i < len; i++) {
            float x = q[qo + i];
            float
                    da =
                            x
                                    - (ba != null
                                            ? ba[(int) o0 + i]
                                            : bs.getAtIndex(ValueLayout.JAVA_FLOAT, o0 + i)),
                    db =
                            x
                                    - (ba != null
                                            ? ba[(int) o1 + i]
                                            : bs.getAtIndex(ValueLayout.JAVA_FLOAT, o1 + i)),
                    dc =
                            x
                                    - (ba != null
                                            ? ba[(int) o2 + i]
                                            : bs.getAtIndex(ValueLayout.JAVA_FLOAT, o2 + i)),
                    dd =
                            x
                                    - (ba != null
                                            ? ba[(int) o3 + i]
                                            : bs.getAtIndex(ValueLayout.JAVA_FLOAT, o3 + i));
            sa = Math.fma(da, da, sa);
            sb = Math.fma(db, db, sb);
            sc = Math.fma(dc, dc, sc);
            sd = Math.fma(dd, dd, sd);
        }
        out[at] = sa;
        if (keep > 1) {
            out[at + 1] = sb;
        }
        if (keep > 2) {
            out[at + 2] = sc;
        }
        if (keep > 3) {
            out[at + 3] = sd;
        }
    }

    /**
     * Two squared distances in the order of {@link PanamaPairs#squareDistance}, sharing the query's
     * loads.
     */
    static void squarePair16(
            float[] q,
            int qo,
            float[] ba,
            MemorySegment bs,
            long o0,
            long o1,
            int len,
            float[] out,
            int at) {
        FloatVector x0 = FloatVector.zero(F16),
                x1 = FloatVector.zero(F16),
                x2 = FloatVector.zero(F16),
                x3 = FloatVector.zero(F16);
        FloatVector y0 = FloatVector.zero(F16),
                y1 = FloatVector.zero(F16),
                y2 = FloatVector.zero(F16),
                y3 = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        for (; i < end64; i += 64) {
            FloatVector q0 = FloatVector.fromArray(F16, q, qo + i),
                    q1 = FloatVector.fromArray(F16, q, qo + i + 16);
            FloatVector q2 = FloatVector.fromArray(F16, q, qo + i + 32),
                    q3 = FloatVector.fromArray(F16, q, qo + i + 48);
            FloatVector d;
            d =
                    q0.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i) * Float.BYTES, NATIVE)));
            x0 = d.fma(d, x0);
            d =
                    q0.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i) * Float.BYTES, NATIVE)));
            y0 = d.fma(d, y0);
            d =
                    q1.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i + 16)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i + 16) * Float.BYTES, NATIVE)));
            x1 = d.fma(d, x1);
            d =
                    q1.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i + 16)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i + 16) * Float.BYTES, NATIVE)));
            y1 = d.fma(d, y1);
            d =
                    q2.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i + 32)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i + 32) * Float.BYTES, NATIVE)));
            x2 = d.fma(d, x2);
            d =
                    q2.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i + 32)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i + 32) * Float.BYTES, NATIVE)));
            y2 = d.fma(d, y2);
            d =
                    q3.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i + 48)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i + 48) * Float.BYTES, NATIVE)));
            x3 = d.fma(d, x3);
            d =
                    q3.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i + 48)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i + 48) * Float.BYTES, NATIVE)));
            y3 = d.fma(d, y3);
        }
        FloatVector rx = x0.add(x2).add(x1.add(x3));
        FloatVector ry = y0.add(y2).add(y1.add(y3));
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector qv = FloatVector.fromArray(F16, q, qo + i);
            FloatVector dx =
                    qv.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o0 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o0 + i) * Float.BYTES, NATIVE)));
            FloatVector dy =
                    qv.sub(
                            (ba != null
                                    ? FloatVector.fromArray(F16, ba, (int) o1 + i)
                                    : FloatVector.fromMemorySegment(
                                            F16, bs, (o1 + i) * Float.BYTES, NATIVE)));
            rx = dx.fma(dx, rx);
            ry = dy.fma(dy, ry);
        }
        float sx = halve16(rx), sy = halve16(ry);
        for (; i < len; i++) {
            float
                    dx =
                            q[qo + i]
                                    - (ba != null
                                            ? ba[(int) o0 + i]
                                            : bs.getAtIndex(ValueLayout.JAVA_FLOAT, o0 + i)),
                    dy =
                            q[qo + i]
                                    - (ba != null
                                            ? ba[(int) o1 + i]
                                            : bs.getAtIndex(ValueLayout.JAVA_FLOAT, o1 + i));
            sx = Math.fma(dx, dx, sx);
            sy = Math.fma(dy, dy, sy);
        }
        out[at] = sx;
        out[at + 1] = sy;
    }

    /*
     * Rows: a graph node's neighbours, scattered through the matrix. On 16 lanes they go four at
     * a time as the batches do: each load of the point feeds four rows, and the four rows' loads
     * are independent, so the CPU has four cache misses in flight instead of one. A remainder of
     * one to three rows runs as a four with its last row repeated and only the real results
     * kept: the repeats hit the cache, and the remainder still overlaps its misses. On 8 lanes
     * rows go one at a time, for the registers' sake (AVX2 has 16).
     */

}
