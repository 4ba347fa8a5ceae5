/** Versioned binary wire format: the message header flyweight, message types, body encodings, chunk grid. */
package io.dlion.aeron.wire;
