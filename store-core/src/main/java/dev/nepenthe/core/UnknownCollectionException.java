package dev.nepenthe.core;

import java.util.NoSuchElementException;

/** A collection name that the store does not hold. */
public final class UnknownCollectionException extends NoSuchElementException {
    public UnknownCollectionException(String name, java.util.Collection<String> existing) {
        super("collection '" + name + "' does not exist; existing collections: " + existing);
    }
}
