package dev.nepenthe.core.internal.vector;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Where a kernel's stored operand lives: a {@code float[]} on the heap or native-order floats in a
 * {@link MemorySegment}. The Panama kernels are written once against this loader and entered
 * through thin methods that pass {@link #HEAP} or {@link #SEGMENT}, so each kernel has one body for
 * both. (Reading arrays through heap segments instead would make one body too, but the JIT compiles
 * that path less well.)
 *
 * <p>There are exactly two loaders, both final and stateless, so a load is at worst a bimorphic
 * call on a loop-invariant receiver, which C2 inlines; where a body is inlined into its entry
 * point, the constant loader's exact type removes even that check. Offsets are split into a start
 * ({@code long}, loop-invariant) and an {@code int} step, so array loads keep the {@code int} index
 * form that C2's range-check elimination recognises.
 *
 * @param <B> the storage: {@code float[]} or {@link MemorySegment}
 */
abstract sealed class FloatSource<B> permits FloatSource.Heap, FloatSource.Segment {

    /** Stored operands in {@code float[]} arrays; starts are array indices. */
    static final FloatSource<float[]> HEAP = new Heap();

    /** Stored operands in memory segments; starts are float indices, not byte offsets. */
    static final FloatSource<MemorySegment> SEGMENT = new Segment();

    private FloatSource() {}

    /** The {@code s.length()} floats from index {@code start + i}. */
    abstract FloatVector load(VectorSpecies<Float> s, B base, long start, int i);

    /** The float at index {@code start + i}. */
    abstract float get(B base, long start, int i);

    static final class Heap extends FloatSource<float[]> {
        @Override
        FloatVector load(VectorSpecies<Float> s, float[] base, long start, int i) {
            return FloatVector.fromArray(s, base, (int) start + i);
        }

        @Override
        float get(float[] base, long start, int i) {
            return base[(int) start + i];
        }
    }

    static final class Segment extends FloatSource<MemorySegment> {
        private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

        @Override
        FloatVector load(VectorSpecies<Float> s, MemorySegment base, long start, int i) {
            return FloatVector.fromMemorySegment(s, base, (start + i) * Float.BYTES, NATIVE);
        }

        @Override
        float get(MemorySegment base, long start, int i) {
            return base.getAtIndex(ValueLayout.JAVA_FLOAT, start + i);
        }
    }
}
