package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.internal.memory.NativeMemory;
import dev.nepenthe.core.vector.VectorKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * Where an {@link HnswGraph}'s vectors and codes live, slot by slot, and the scorers over them.
 * Apart from the graph so the lists and the bytes they point at each have one owner.
 *
 * <ul>
 *   <li>Vectors: slot {@code s} at float {@code [s*dim, (s+1)*dim)} of one float array on the heap,
 *       or, with {@link HnswParams.VectorStorage#OFF_HEAP}, of one native memory segment (floats in
 *       native byte order; offsets are longs, so no 2^31 bound), which counts against {@code
 *       -XX:MaxDirectMemorySize} (by default the maximum heap size) and which the garbage collector
 *       releases when grown out, as it would an array.
 *   <li>Codes, in a quantized graph only: one byte array, or with the vectors off the heap one
 *       native segment beside them; slot {@code s}'s {@link Int8Codes} entry at {@code [s*stride,
 *       (s+1)*stride)}, written with the vector and zeroed with it.
 * </ul>
 *
 * Grown and zeroed by the graph under its locks; read by searches through the scorers of a {@link
 * GraphLayout}.
 */
final class SlotVectors {
    final int dim;
    private final Metric metric;
    private final VectorKernels kernels;

    /** The codes' layout and encoder in a quantized graph, else null. */
    private final Int8Codes codec;

    private final int codeStride;

    /** The vectors on the heap, or null when they live in {@link #offHeapVectors}. */
    private float[] heapVectors;

    /** The vectors off the heap, or null when they live in {@link #heapVectors}. */
    private MemorySegment offHeapVectors;

    /**
     * Per slot the code of its vector (see {@link Int8Codes}); empty when not quantized, null when
     * the codes live in {@link #offHeapCodes}.
     */
    private byte[] codes;

    /** The codes off the heap (a quantized graph whose vectors are off the heap too), else null. */
    private MemorySegment offHeapCodes;

    SlotVectors(
            int dim,
            Metric metric,
            VectorKernels kernels,
            HnswParams.Quantization quantization,
            HnswParams.VectorStorage storage) {
        this.dim = dim;
        this.metric = metric;
        this.kernels = kernels;
        this.codec = quantization == HnswParams.Quantization.INT8 ? new Int8Codes(dim) : null;
        this.codeStride = codec == null ? 0 : codec.stride();
        if (storage == HnswParams.VectorStorage.OFF_HEAP) {
            this.offHeapVectors = MemorySegment.NULL;
        } else {
            this.heapVectors = new float[0];
        }
        if (codec != null && storage == HnswParams.VectorStorage.OFF_HEAP) {
            this.offHeapCodes = MemorySegment.NULL;
        } else {
            this.codes = new byte[0];
        }
    }

    /** Grows to {@code newCapacity} slots. Caller holds the graph's exclusive lock. */
    void grow(int newCapacity) {
        if (offHeapVectors != null) {
            // Released with the segment's last reference (a search may still hold the old
            // layout); zeroed, and in huge pages where the system has them (fewer faults at an
            // open, fewer TLB misses for a search's random reads).
            MemorySegment grown =
                    NativeMemory.allocate(
                            Math.multiplyExact((long) newCapacity * dim, Float.BYTES));
            MemorySegment.copy(offHeapVectors, 0, grown, 0, offHeapVectors.byteSize());
            offHeapVectors = grown;
        } else {
            heapVectors = Arrays.copyOf(heapVectors, Math.multiplyExact(newCapacity, dim));
        }
        if (offHeapCodes != null) {
            MemorySegment grown = NativeMemory.allocate((long) newCapacity * codeStride);
            MemorySegment.copy(offHeapCodes, 0, grown, 0, offHeapCodes.byteSize());
            offHeapCodes = grown;
        } else if (codec != null) {
            codes = Arrays.copyOf(codes, Math.multiplyExact(newCapacity, codeStride));
        }
    }

    /** Zeroes slot {@code s}'s vector bytes and code, as its slot is freed. */
    void zero(int slot) {
        if (offHeapVectors != null) {
            offHeapVectors
                    .asSlice(vectorOffset(slot) * Float.BYTES, (long) dim * Float.BYTES)
                    .fill((byte) 0);
        } else {
            Arrays.fill(heapVectors, slot * dim, (slot + 1) * dim, 0f);
        }
        if (offHeapCodes != null) {
            offHeapCodes.asSlice(codeOffset(slot), codeStride).fill((byte) 0);
        } else if (codec != null) {
            Arrays.fill(codes, slot * codeStride, (slot + 1) * codeStride, (byte) 0);
        }
    }

    /**
     * New exact scorers over the vectors as they are now: building, repairing, exact scans and the
     * re-rank of a quantized search score with these.
     */
    ScorerSupplier exactScorers() {
        return offHeapVectors != null
                ? new FloatVectorScorers(metric, kernels, offHeapVectors, dim)
                : new FloatVectorScorers(metric, kernels, heapVectors, dim);
    }

    /**
     * The scorers a search walks with: new ones over the codes in a quantized graph (grown and
     * zeroed with the vectors), else {@code exact}.
     */
    ScorerSupplier searchScorers(ScorerSupplier exact) {
        if (codec == null) {
            return exact;
        }
        return offHeapCodes != null
                ? new Int8VectorScorers(metric, kernels, codec, offHeapCodes)
                : new Int8VectorScorers(metric, kernels, codec, codes);
    }

    /**
     * The vectors, wherever they live, as a segment (a view of the heap array, or the native
     * segment); slot {@code s} starts at float {@link #vectorOffset}. For tests and checks, not for
     * scoring.
     */
    MemorySegment vectors() {
        return offHeapVectors != null ? offHeapVectors : MemorySegment.ofArray(heapVectors);
    }

    /** Whether the vectors live off the heap. */
    boolean vectorsOffHeap() {
        return offHeapVectors != null;
    }

    /** Where slot {@code s}'s vector starts, in floats. */
    long vectorOffset(int slot) {
        return (long) slot * dim;
    }

    /** Stores a slot's vector and, in a quantized graph, its code. */
    void setVector(int slot, float[] prepared) {
        setVector(slot, prepared, null);
    }

    /**
     * Stores a slot's vector and, in a quantized graph, its code: {@code code} (the stride long)
     * when a file carried it, else encoded from the vector.
     */
    void setVector(int slot, float[] prepared, byte[] code) {
        if (offHeapVectors != null) {
            MemorySegment.copy(
                    prepared,
                    0,
                    offHeapVectors,
                    ValueLayout.JAVA_FLOAT,
                    vectorOffset(slot) * Float.BYTES,
                    dim);
        } else {
            System.arraycopy(prepared, 0, heapVectors, slot * dim, dim);
        }
        if (codec == null) {
            return;
        }
        if (code == null && offHeapCodes == null) {
            codec.encode(prepared, 0, codes, slot * codeStride);
            return;
        }
        if (code == null) {
            code = new byte[codeStride];
            codec.encode(prepared, 0, code, 0);
        }
        if (offHeapCodes != null) {
            MemorySegment.copy(
                    code, 0, offHeapCodes, ValueLayout.JAVA_BYTE, codeOffset(slot), codeStride);
        } else {
            System.arraycopy(code, 0, codes, slot * codeStride, codeStride);
        }
    }

    float[] vectorCopy(int slot) {
        float[] v = new float[dim];
        copyVector(slot, v);
        return v;
    }

    /** Copies slot {@code s}'s vector into {@code into[0, dim)}. */
    void copyVector(int slot, float[] into) {
        if (offHeapVectors != null) {
            MemorySegment.copy(
                    offHeapVectors,
                    ValueLayout.JAVA_FLOAT,
                    vectorOffset(slot) * Float.BYTES,
                    into,
                    0,
                    dim);
        } else {
            System.arraycopy(heapVectors, slot * dim, into, 0, dim);
        }
    }

    /** Whether every byte of slot {@code s}'s vector is zero (a freed slot's must be). */
    boolean vectorIsZero(int slot) {
        MemorySegment v = vectors();
        long from = vectorOffset(slot);
        for (long i = from; i < from + dim; i++) {
            // Bits, not float equality: a -0.0f left behind is not zero bytes.
            if (v.getAtIndex(ValueLayout.JAVA_INT, i) != 0) {
                return false;
            }
        }
        return true;
    }

    // codes (quantized graphs only)

    /** The codes' layout and encoder, or null when the graph is not quantized. */
    Int8Codes codec() {
        return codec;
    }

    /** Copies slot {@code s}'s code into {@code into[0, stride)} (a quantized graph only). */
    void copyCode(int slot, byte[] into) {
        if (offHeapCodes != null) {
            MemorySegment.copy(
                    offHeapCodes, ValueLayout.JAVA_BYTE, codeOffset(slot), into, 0, codeStride);
        } else {
            System.arraycopy(codes, slot * codeStride, into, 0, codeStride);
        }
    }

    /**
     * Every slot's code up to the capacity, slot {@code s} at {@code s * stride}: a copy, for
     * tests.
     */
    byte[] codesCopy() {
        return offHeapCodes != null ? offHeapCodes.toArray(ValueLayout.JAVA_BYTE) : codes.clone();
    }

    /** Byte {@code i} of slot {@code s}'s code, for tests that plant a fault. */
    byte codeByte(int slot, int i) {
        return offHeapCodes != null
                ? offHeapCodes.get(ValueLayout.JAVA_BYTE, codeOffset(slot) + i)
                : codes[slot * codeStride + i];
    }

    /** Sets byte {@code i} of slot {@code s}'s code, for tests that plant a fault. */
    void setCodeByte(int slot, int i, byte value) {
        if (offHeapCodes != null) {
            offHeapCodes.set(ValueLayout.JAVA_BYTE, codeOffset(slot) + i, value);
        } else {
            codes[slot * codeStride + i] = value;
        }
    }

    /** Whether the codes live off the heap. */
    boolean codesOffHeap() {
        return offHeapCodes != null;
    }

    private long codeOffset(int slot) {
        return (long) slot * codeStride;
    }
}
