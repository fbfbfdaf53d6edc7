// zoom on a tab: a region of its viewport (CSS pixels, as the tab's screenshot shows it) through the tab's
// one capture (Tab.screenshot: Page.captureScreenshot with a clip and a scale, secret fields masked).
import { planZoom, type ZoomImage, type ZoomRequest } from '../contract/zoom.js';
import type { Tab } from './tab/tab.js';

export async function zoomTab(tab: Tab, request: ZoomRequest): Promise<ZoomImage> {
  const area = await tab.visibleArea();
  // The bound counts device pixels: CDP's clip scale multiplies the device pixel ratio.
  const plan = planZoom(request, area, `tab ${tab.id}'s viewport`, area.density);
  const { region, scale } = plan;
  // CDP's clip is in document coordinates: the viewport's region moves with the page's scroll.
  const shot = await tab.screenshot({
    x: region.x + area.pageX,
    y: region.y + area.pageY,
    width: region.width,
    height: region.height,
    scale,
  });
  return { data: shot.data, width: shot.width, height: shot.height, region, scale, notes: plan.notes };
}
