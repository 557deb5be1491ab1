package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import java.util.Arrays;
import org.apache.lucene.util.quantization.OptimizedScalarQuantizer.QuantizationResult;

/**
 * Writes {@link ScalarCodes} entries: rotation, residual to the list's centre, OSQ's interval and
 * levels, then the bit planes and corrections of the layout {@link ScalarCodes} describes. Apart
 * from the codec because it holds per-thread scratch, and the codec is shared by every thread.
 *
 * <p>For one thread at a time; make one per thread with {@link ScalarCodes#encoder()}.
 */
final class ScalarEncoder {
    private final ScalarCodes codec;
    private final int dim;
    private final int bits;
    private final int planeBytes;
    private final int bytesPerVector;
    private final float[] residual;
    private final float[] rotationScratch;
    private final byte[] levels;
    private final long[] planes;
    // OSQ subtracts a centroid in place; ours is subtracted (after rotation) already.
    private final float[] zeros;

    ScalarEncoder(ScalarCodes codec) {
        this.codec = codec;
        this.dim = codec.dimension();
        this.bits = codec.bits();
        this.planeBytes = codec.planeBytes();
        this.bytesPerVector = codec.bytesPerVector();
        this.residual = new float[dim];
        this.rotationScratch = new float[dim];
        this.levels = new byte[dim];
        this.planes = new long[bits * codec.words()];
        this.zeros = new float[dim];
    }

    /**
     * Writes the entry of {@code vector[off, off+dim)} (prepared for the metric) relative to {@code
     * centre} to {@code out[outOff, outOff + bytesPerVector())}. Cost: one rotation plus OSQ's
     * interval search (about a dozen passes over the dimensions).
     *
     * @throws IllegalArgumentException on a short range, a non-finite component, a centre of other
     *     codes, or an output too short
     */
    void encode(float[] vector, int off, ScalarCodes.Centre centre, byte[] out, int outOff) {
        codec.checkRange("vector", vector, off);
        codec.checkOwn(centre);
        codec.checkEntries(out, outOff, 1);
        encodeChecked(vector, off, centre, out, outOff);
    }

    /**
     * Encodes a whole list against its (new) centre: {@code count} vectors at {@code
     * block[offsets[i], offsets[i] + dim)}, entries written back to back to {@code out} from {@code
     * outOff} in the order given. The centre is rotated once (by {@link ScalarCodes#centre}), each
     * vector once; this is what an index runs when a removal moves a list's mean and the list must
     * be re-encoded.
     *
     * @throws IllegalArgumentException as {@link #encode}, for any of the vectors
     */
    void encodeList(
            float[] block,
            int[] offsets,
            int count,
            ScalarCodes.Centre centre,
            byte[] out,
            int outOff) {
        codec.checkOwn(centre);
        if (offsets == null || count < 0 || count > offsets.length) {
            throw new IllegalArgumentException(
                    "scalar codes: expected "
                            + count
                            + " vector offsets, got "
                            + (offsets == null ? "null" : offsets.length));
        }
        codec.checkEntries(out, outOff, count);
        for (int i = 0; i < count; i++) {
            codec.checkRange("vector " + i, block, offsets[i]);
        }
        for (int i = 0; i < count; i++) {
            encodeChecked(block, offsets[i], centre, out, outOff + i * bytesPerVector);
        }
    }

    private void encodeChecked(
            float[] vector, int off, ScalarCodes.Centre centre, byte[] out, int outOff) {
        // 1. Rotate, then take the residual to the rotated centre.
        codec.rotation().apply(vector, off, residual, rotationScratch);
        float[] c = centre.rotated;
        double norm2 = 0;
        double centreDot = 0;
        for (int i = 0; i < dim; i++) {
            float r = residual[i] - c[i];
            residual[i] = r;
            norm2 += (double) r * r;
            centreDot += (double) c[i] * r;
        }
        if (!Double.isFinite(norm2) || !Double.isFinite(centreDot)) {
            throw new IllegalArgumentException(
                    "scalar codes: vector has a non-finite component"
                            + " (or overflows float when squared)");
        }
        float exact = (float) (codec.metric() == Metric.DOT ? centreDot : norm2);
        // 2. OSQ's per-vector interval and levels.
        float lowerScaled = 0;
        float stepScaled = 0;
        int levelSum = 0;
        if (norm2 == 0) {
            // The vector is its centre: <s, r> = 0 for every query, which zero corrections
            // give.
            Arrays.fill(levels, (byte) 0);
        } else {
            QuantizationResult q =
                    codec.quantizer().scalarQuantize(residual, levels, (byte) bits, zeros);
            float lower = q.lowerInterval();
            float step = (q.upperInterval() - lower) / ((1 << bits) - 1);
            levelSum = q.quantizedComponentSum();
            // 3. alpha = <r^, r> / |r|^2, the share of r the dequantized vector keeps along r.
            double along = 0;
            for (int i = 0; i < dim; i++) {
                along += (double) residual[i] * (lower + step * (levels[i] & 0xFF));
            }
            double alpha = along / norm2;
            // A non-positive alpha needs a grid that points away from r (possible only for
            // pathological intervals); dividing by it would flip the estimate, so such a code
            // keeps the plain dequantized product.
            double inv = alpha > 1e-6 && Double.isFinite(alpha) ? 1 / alpha : 1;
            lowerScaled = (float) (lower * inv);
            stepScaled = (float) (step * inv);
        }
        // 4. The entry: bit planes, then corrections.
        codec.transpose(levels, bits, planes);
        for (int t = 0; t < planes.length; t++) {
            ScalarCodes.LONGS.set(out, outOff + t * Long.BYTES, planes[t]);
        }
        int co = outOff + planeBytes;
        ScalarCodes.FLOATS.set(out, co, lowerScaled);
        ScalarCodes.FLOATS.set(out, co + 4, stepScaled);
        ScalarCodes.FLOATS.set(out, co + 8, exact);
        ScalarCodes.INTS.set(out, co + 12, levelSum);
    }
}
