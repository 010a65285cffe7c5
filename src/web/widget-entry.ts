import { mount } from "./widget.js";

declare global {
  interface Window {
    Parley: { mount: typeof mount };
  }
}

window.Parley = { mount };
