/**
 * DL4J's training UI server for a D-Lion job's workers ({@code ./dlion ui}): {@link io.dlion.ui.UiServerMain} starts
 * DL4J's {@code UIServer} with its remote listener on. An optional module, built with {@code -Pui}: its Vert.x server is
 * about 100 MB of jars that neither the library nor the workers need.
 */
package io.dlion.ui;
