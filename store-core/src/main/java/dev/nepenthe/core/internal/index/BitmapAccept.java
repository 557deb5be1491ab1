package dev.nepenthe.core.internal.index;

import dev.nepenthe.core.index.Accept;
import java.util.PrimitiveIterator;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * The ordinals a search request allows, as the collection computes them: a bitmap behind the index
 * SPI's {@link Accept}.
 */
public final class BitmapAccept implements Accept {

    private final RoaringBitmap ordinals;

    public BitmapAccept(RoaringBitmap ordinals) {
        this.ordinals = ordinals;
    }

    @Override
    public boolean accepts(int ordinal) {
        return ordinals.contains(ordinal);
    }

    @Override
    public long cardinality() {
        return ordinals.getLongCardinality();
    }

    @Override
    public PrimitiveIterator.OfInt ordinals() {
        IntIterator it = ordinals.getIntIterator();
        return new PrimitiveIterator.OfInt() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public int nextInt() {
                return it.next();
            }
        };
    }
}
